package io.imageworker.testing.launch;

import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.ResponseForm;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.infra.ChildProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * What the tests' workers start from: on Java 25 and later an AOT cache of the packaged worker (JEP 483, 514, 515: its
 * classes loaded and linked, its methods' profiles), as the image's worker does; before, a class data sharing archive
 * (AppCDS, a dynamic archive: JDK 13 and later). The suite starts about forty workers: a start took 3.2 CPU seconds
 * without an archive and 2.4 with it (C1 only, November 2026); to the worker's readiness, 5.35 CPU s on Java 17 with
 * the archive and 4.4 on Java 25 with the cache ({@link WorkerJava}, which picks the Java). The worker is the same jar
 * with or without either: they hold the classes as the JVM loaded them, nothing of the worker's behaviour.
 *
 * <p>It is made once per JVM, as the test discovery starts when it selects an integration test
 * ({@link EarlyWorkerClassArchive}: while Quarkus builds its test applications, the cores have room), or else at the
 * first launch: a worker of its own, started with {@code -XX:AOTCacheOutput} or {@code -XX:ArchiveClassesAtExit}. In
 * the tests it handles {@value #WORKLOAD} requests on the shared test servers first ({@link Training#WORKLOAD}): an
 * archive of a start alone left out the classes of the request path, which each test's worker then loaded from the jar
 * (on a quiet machine, 40 requests took a worker 3.1 CPU s after its start from an archive of a start, 2.5 from one of a
 * workload, and its start 4.55 against 4.3). Elsewhere (the local run, the benchmarks), or when the workload fails, it
 * is started with nothing to reach (closed ports, no test's servers or topics) and stopped once it says it started.
 * It is stopped with SIGTERM; the JVM writes the file at its exit (an AOT cache is assembled then, by a second JVM the first one starts), into a
 * temporary file moved in place afterwards. Launches meanwhile wait for it. It is kept under {@code
 * target/worker-cds/}, named by the jar's modification time and the JDK, so that a new package or another JDK makes
 * another; a JVM that cannot use it runs without one. {@code -Dimage-worker.test.worker-cds=false} turns it off.
 */
final class WorkerClassArchive {

    /** Turns the archive off: {@code -Dimage-worker.test.worker-cds=false}. */
    static final String PROPERTY = "image-worker.test.worker-cds";

    private static final Logger LOG = Logger.getLogger(WorkerClassArchive.class);
    private static final Duration TRAINING_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(180);
    private static final Map<Path, CompletableFuture<Void>> MAKING = new ConcurrentHashMap<>();
    private static final Path LOGS = BuildPaths.directory("launch-logs");
    /** The requests of a {@link Training#WORKLOAD}. */
    private static final int WORKLOAD = 40;

    /** What the worker that writes the archive does before it exits. */
    enum Training {
        /** It starts with nothing to reach: the classes of a start (what a JVM without the test servers can do). */
        START,
        /**
         * It handles requests on the shared test servers ({@link LaunchStack#onSharedServers}), then a start if that
         * fails: the classes of the request path too (the Kafka transactions, the S3 client, the gateway's client, the
         * image checks), which every test's worker loads in its first requests.
         */
        WORKLOAD
    }

    private WorkerClassArchive() {}

    /**
     * The JVM options that start a worker of {@code jar} on {@code java} with the archive, none when it is off; the
     * first call makes it, a call while it is being made waits for it.
     */
    static List<String> jvmOptions(String java, Path jar) {
        if (!enabled()) {
            return List.of();
        }
        Path archive = archiveOf(java, jar);
        if (!Files.isRegularFile(archive)) {
            // Bounded: the making gives up after its own timeouts, and then there is no archive.
            makeInBackground(java, jar, Training.START).join();
        }
        if (!Files.isRegularFile(archive)) {
            return List.of();
        }
        return List.of((aotCache(java) ? "-XX:AOTCache=" : "-XX:SharedArchiveFile=") + archive);
    }

    /**
     * Starts making the archive on a thread of its own unless it exists or is being made (what a test discovery
     * that selects integration tests does: {@link EarlyWorkerClassArchive}, with a {@link Training#WORKLOAD}); done at
     * once when it is off.
     */
    static CompletableFuture<Void> makeInBackground(String java, Path jar, Training training) {
        if (!enabled()) {
            return CompletableFuture.completedFuture(null);
        }
        return MAKING.computeIfAbsent(
                archiveOf(java, jar),
                archive -> Files.isRegularFile(archive)
                        ? CompletableFuture.completedFuture(null)
                        : CompletableFuture.runAsync(() -> make(java, jar, archive, training), task -> {
                            Thread maker = new Thread(task, "worker-class-archive");
                            maker.setDaemon(true);
                            maker.start();
                        }));
    }

    private static boolean enabled() {
        return Boolean.parseBoolean(System.getProperty(PROPERTY, "true"));
    }

    /** Whether the workers started by {@code java} use an AOT cache (Java 25 and later) rather than a CDS archive. */
    static boolean aotCache(String java) {
        return WorkerJava.releaseOf(java) >= WorkerJava.AOT_CACHE_RELEASE;
    }

    private static Path archiveOf(String java, Path jar) {
        long modified;
        try {
            modified = Files.getLastModifiedTime(jar).toMillis();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String jdk = WorkerJava.versionOf(java).replaceAll("[^A-Za-z0-9.]", "_");
        return BuildPaths.directory("worker-cds")
                .resolve("worker-" + modified + "-" + jdk + (aotCache(java) ? ".aot" : ".jsa"));
    }

    /**
     * Writes the archive: from a worker that handles a workload on the shared test servers when {@code training} says
     * so and that succeeds, else from a worker that only starts; on any failure, logs it and leaves no archive.
     */
    private static void make(String java, Path jar, Path archive, Training training) {
        Path partial = archive.resolveSibling(archive.getFileName() + ".partial");
        long started = System.nanoTime();
        try {
            boolean written = training == Training.WORKLOAD && writtenAfterAWorkload(java, jar, partial);
            if (!written) {
                writeAfterAStart(java, jar, partial);
            }
            if (Files.size(partial) == 0) {
                throw new IllegalStateException("the worker wrote no archive");
            }
            Files.move(partial, archive, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            LOG.infof(
                    "Made the workers' class archive %s in %d ms, %s",
                    archive,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started),
                    written ? "after a workload" : "after a start");
        } catch (IOException | RuntimeException e) {
            LOG.warnf("No class archive for the workers (%s; see %s): they start without one", e, LOGS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A worker on the shared test servers ({@link LaunchStack#onSharedServers}: topics and a group of its own, a
     * simulator that answers in 20 to 100 ms, half of its images as a {@code url}) handles {@value #WORKLOAD} requests,
     * some of them asking for two images, a refused one and a replayed one, then is stopped with SIGTERM; the JVM writes
     * the archive at that exit. Whether it did; false, logged, when the servers or the worker failed.
     */
    private static boolean writtenAfterAWorkload(String java, Path jar, Path partial) throws IOException {
        Files.deleteIfExists(partial);
        SimulatorSettings simulator = SimulatorSettings.unlimited(
                        Latency.uniform(Duration.ofMillis(20), Duration.ofMillis(100)))
                .withResponseForm(ResponseForm.MIXED, 0.5);
        try (LaunchStack stack = LaunchStack.onSharedServers(simulator);
                PipelineClient client = PipelineClient.on(stack)) {
            WorkerProcess worker = WorkerProcess.builder()
                    .name("worker-cds-training")
                    .env(stack.workerEnvironment(4))
                    // Stopped at once, even by the JVM's exit in the middle of its workload (a run of a test that
                    // started no worker of its own): it then has requests in progress, and no test waits for them.
                    .env("IMAGE_WORKER_SHUTDOWN_GRACE", "1s")
                    .command(trainingCommand(java, jar, partial))
                    .startTimeout(TRAINING_TIMEOUT)
                    .build();
            try {
                worker.start();
                client.awaitEnded(client.publishTrainingWorkload("cds", WORKLOAD), TRAINING_TIMEOUT);
            } finally {
                // SIGTERM, then the JVM writes the archive (an AOT cache is assembled by a second JVM: 10 to 20 CPU s).
                worker.stop();
            }
            return worker.lastExit().map(exit -> !exit.killed()).orElse(false)
                    && Files.isRegularFile(partial)
                    && Files.size(partial) > 0;
        } catch (RuntimeException e) {
            LOG.infof("The workers' class archive is made after a start only: its workload failed (%s)", e);
            return false;
        }
    }

    /** A worker started with nothing to reach writes the archive once it says it started and is stopped. */
    private static void writeAfterAStart(String java, Path jar, Path partial) throws IOException, InterruptedException {
        Files.deleteIfExists(partial);
        Path log = LOGS.resolve("worker-cds-training.log");
        ProcessBuilder builder = new ProcessBuilder(trainingCommand(java, jar, partial))
                .directory(BuildPaths.buildDir().toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().keySet().removeIf(WorkerProcess::configuresAWorker);
        builder.environment().putAll(unreachableSettings());
        Process worker = builder.start();
        try {
            awaitStarted(worker, log);
        } finally {
            worker.destroy();
            if (!worker.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                worker.destroyForcibly();
            }
        }
    }

    private static List<String> trainingCommand(String java, Path jar, Path partial) {
        return List.of(
                java,
                "-XX:TieredStopAtLevel=1",
                "-Xmx256m",
                (aotCache(java) ? "-XX:AOTCacheOutput=" : "-XX:ArchiveClassesAtExit=") + partial,
                "-jar",
                jar.toString());
    }

    /** Until the worker logs that it started; fails if it exits or takes longer than the training's bound. */
    private static void awaitStarted(Process worker, Path log) {
        await("the class archive's worker started")
                .atMost(TRAINING_TIMEOUT)
                .pollInterval(Duration.ofMillis(100))
                .failFast("the worker exited", () -> !worker.isAlive())
                .until(() -> Files.readString(log, StandardCharsets.UTF_8).contains(" started in "));
    }

    /** The required settings, each pointing at a port nothing listens on, and a free HTTP port. */
    private static Map<String, String> unreachableSettings() {
        String nowhere = ChildProcess.HOST + ":" + ChildProcess.freePort();
        return Map.of(
                "KAFKA_BOOTSTRAP_SERVERS",
                nowhere,
                "IMAGE_WORKER_GATEWAY_BASE_URL",
                "http://" + nowhere,
                "IMAGE_WORKER_GATEWAY_API_KEY",
                "sk-class-archive",
                "IMAGE_WORKER_GATEWAY_MODEL",
                "class-archive",
                "IMAGE_WORKER_STORAGE_ENDPOINT",
                "http://" + nowhere,
                "QUARKUS_HTTP_HOST",
                ChildProcess.HOST,
                "QUARKUS_HTTP_PORT",
                Integer.toString(ChildProcess.freePort()));
    }
}
