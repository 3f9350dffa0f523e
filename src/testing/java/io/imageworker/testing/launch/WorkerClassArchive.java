package io.imageworker.testing.launch;

import static org.awaitility.Awaitility.await;

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
 * first launch: a worker of its own, started with nothing to reach (closed ports, no test's servers or topics) and
 * {@code -XX:AOTCacheOutput} or {@code -XX:ArchiveClassesAtExit}, stopped with SIGTERM once it says it started; the
 * JVM writes the file at its exit (an AOT cache is assembled then, by a second JVM the first one starts), into a
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
            makeInBackground(java, jar).join();
        }
        if (!Files.isRegularFile(archive)) {
            return List.of();
        }
        return List.of((aotCache(java) ? "-XX:AOTCache=" : "-XX:SharedArchiveFile=") + archive);
    }

    /**
     * Starts making the archive on a thread of its own unless it exists or is being made (what a test discovery
     * that selects integration tests does: {@link EarlyWorkerClassArchive}); done at once when it is off.
     */
    static CompletableFuture<Void> makeInBackground(String java, Path jar) {
        if (!enabled()) {
            return CompletableFuture.completedFuture(null);
        }
        return MAKING.computeIfAbsent(
                archiveOf(java, jar),
                archive -> Files.isRegularFile(archive)
                        ? CompletableFuture.completedFuture(null)
                        : CompletableFuture.runAsync(() -> make(java, jar, archive), task -> {
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

    /** Starts a worker that writes the archive at its exit; on any failure, logs it and leaves no archive. */
    private static void make(String java, Path jar, Path archive) {
        Path partial = archive.resolveSibling(archive.getFileName() + ".partial");
        Path log = BuildPaths.directory("launch-logs").resolve("worker-cds-training.log");
        long started = System.nanoTime();
        try {
            Files.deleteIfExists(partial);
            ProcessBuilder builder = new ProcessBuilder(
                            java,
                            "-XX:TieredStopAtLevel=1",
                            "-Xmx256m",
                            (aotCache(java) ? "-XX:AOTCacheOutput=" : "-XX:ArchiveClassesAtExit=") + partial,
                            "-jar",
                            jar.toString())
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
                // An AOT cache is assembled at the exit, by a JVM the worker's starts and waits for: 10 to 20 CPU s.
                if (!worker.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                    worker.destroyForcibly();
                }
            }
            if (Files.size(partial) == 0) {
                throw new IllegalStateException("the worker wrote no archive");
            }
            Files.move(partial, archive, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            LOG.infof(
                    "Made the workers' class archive %s in %d ms",
                    archive, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        } catch (IOException | RuntimeException e) {
            LOG.warnf("No class archive for the workers (%s; see %s): they start without one", e, log);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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
