package io.imageworker.testing.launch;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.ResponseForm;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.infra.Infrastructure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Trains the JDK 25 AOT cache of the packaged worker (JEP 483 class loading and linking, JEP 514's one-step
 * {@code -XX:AOTCacheOutput}, JEP 515's method profiles) on a run as close to production as this machine allows: the
 * packaged worker, started as the image starts it, against a real Kafka broker, a real S3 store and the gateway
 * simulator, handles a few hundred requests (answers as {@code b64_json} and as {@code url}, variants, a refused
 * request, a replayed one, the status endpoint, health and metrics), then is stopped with SIGTERM as Kubernetes stops
 * it; on that exit the JVM writes the cache. A start-up-only training (Quarkus's {@code quarkus.package.jar.appcds},
 * which runs the application's static init and exits) leaves out every class and profile of the request path, which a
 * scaled-out replica meets in its first seconds: the Kafka consumer and producer, the transactions, the S3 client, the
 * gateway's HTTP client, the image checks.
 *
 * <p>A cache is only used by the exact JVM build that wrote it, on the same runtime image (the JDK's {@code
 * lib/modules}: a cache written by a JDK is refused by the JRE of the same release): {@code aot.java} names the
 * {@code java} launcher of the runtime that will run the worker (default: this JVM's), and this tool refuses to run on
 * a Java older than 25. The worker's JVM options go in {@code aot.jvm-options}: those of the production run (its
 * garbage collector, say), since the cache keeps what they decided.
 *
 * <p>Run by {@code ./mvnw package -Paot} (see the pom) and by the Dockerfile's build stage. System properties: {@code
 * aot.java}, {@code aot.jvm-options}, {@code aot.cache} (default {@code target/quarkus-app/app/image-worker.aot}),
 * {@code aot.requests} (300), {@code aot.echo-worker}.
 */
public final class AotTraining {

    /** Where the cache goes by default, beside the application's jar: the image's most often changed layer. */
    public static final String CACHE = "quarkus-app/app/image-worker.aot";

    private AotTraining() {}

    public static void main(String[] args) throws IOException {
        LaunchLogging.quiet();
        if (Runtime.version().feature() < 25) {
            System.err.println("[aot] The AOT cache needs a JDK 25 or newer; this build runs on Java "
                    + Runtime.version() + ". Run it with JAVA_HOME set to a JDK 25 (./mvnw picks it up), or pass"
                    + " -Daot.jdk=<the home of a JDK 25>. Without the cache the worker runs on Java 17 as before.");
            System.exit(2);
        }
        Path cache = Path.of(System.getProperty(
                        "aot.cache", BuildPaths.buildDir().resolve(CACHE).toString()))
                .toAbsolutePath();
        String java = System.getProperty("aot.java", "").isBlank()
                ? Path.of(System.getProperty("java.home"), "bin", "java").toString()
                : System.getProperty("aot.java").trim();
        int requests = Integer.getInteger("aot.requests", 300);
        List<String> jvmOptions = Benchmark.words(System.getProperty("aot.jvm-options", ""));
        Files.deleteIfExists(cache);
        Benchmark.onEmbeddedInfrastructure("image-worker-aot", (infrastructure, dataDir) -> {
            train(infrastructure, java, jvmOptions, cache, requests);
            return List.of();
        });
        if (!Files.isRegularFile(cache) || Files.size(cache) == 0) {
            System.err.println("[aot] FAILED: the worker's JVM wrote no cache at " + cache + " (see its log above)");
            System.exit(1);
        }
        Benchmark.say("AOT cache written: %s (%d MB), trained on %s", cache, Files.size(cache) >> 20, java);
    }

    private static void train(
            Infrastructure infrastructure, String java, List<String> jvmOptions, Path cache, int requests) {
        // Half the answers as b64_json, half as a URL to fetch, as a real gateway may answer; a latency of a real call
        // would only lengthen the training.
        SimulatorSettings simulator = SimulatorSettings.unlimited(
                        Latency.uniform(Duration.ofMillis(20), Duration.ofMillis(200)))
                .withResponseForm(ResponseForm.MIXED, 0.5);
        try (LaunchStack stack = LaunchStack.on(infrastructure, simulator)) {
            List<String> command = new ArrayList<>();
            command.add(java);
            command.addAll(jvmOptions);
            command.add("-XX:AOTCacheOutput=" + cache);
            command.add("-jar");
            command.add(BuildPaths.workerJar().toString());
            WorkerProcess worker = WorkerProcess.builder()
                    .name("aot-training")
                    .env(stack.workerEnvironment(16))
                    .command(command)
                    .echo(Boolean.getBoolean("aot.echo-worker"))
                    // Creating the cache at exit takes a child JVM of its own: more than a start on a loaded machine.
                    .startTimeout(Duration.ofMinutes(3))
                    .build();
            try (PipelineClient client = PipelineClient.on(stack)) {
                Benchmark.say("training the AOT cache: %s (log %s)", String.join(" ", command), worker.logFile());
                worker.start();
                List<String> ids = client.publishTrainingWorkload("aot", requests);
                client.awaitEnded(ids, Duration.ofMinutes(5));
                touchHttpEndpoints(worker, ids.get(0));
                Map<String, Long> outcomes = new java.util.TreeMap<>();
                client.results()
                        .forEach(result -> outcomes.merge(result.completed() ? "completed" : "failed", 1L, Long::sum));
                Benchmark.say(
                        "training run: %d requests ended %s; stopping the worker (SIGTERM)", ids.size(), outcomes);
            } finally {
                worker.stop();
            }
            Benchmark.say("the worker exited: %s", worker.lastExit().orElse(null));
        }
    }

    /** The status endpoint, health and metrics, as a producer, the probes and Prometheus call them. */
    private static void touchHttpEndpoints(WorkerProcess worker, String requestId) {
        HttpClient http = HttpClient.newHttpClient();
        String base = "http://127.0.0.1:" + worker.port();
        for (String path : List.of("/requests/" + requestId, "/q/health/live", "/q/health/ready", "/q/metrics")) {
            try {
                http.send(
                        HttpRequest.newBuilder(URI.create(base + path)).build(),
                        HttpResponse.BodyHandlers.discarding());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
