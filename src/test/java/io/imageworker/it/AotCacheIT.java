package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.launch.AotTraining;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.WorkerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged worker started as the README and the image start it, {@code java -XX:AOTCache=<cache> -jar
 * quarkus-run.jar}, with the cache the {@code aot} profile trained ({@link AotTraining}), read from the JVM's own
 * start-up log ({@code -Xlog:aot}, {@code -Xlog:class+load}): the cache is opened, and the classes of the request
 * path (the Kafka consumer, the gateway client, the store, the result publisher) come from it, not from the jars;
 * and a cache the JVM cannot use (written for another configuration, or damaged) costs a warning, not the start.
 *
 * <p>Runs only in the {@code aot} profile ({@code ./mvnw verify -Paot}, with a JDK 25), which trains the cache first
 * and gives the {@code java} that trained it ({@code aot.java}): a cache is only used by the JVM build that wrote it.
 */
class AotCacheIT {

    private static final String JAVA = System.getProperty("aot.java", "no aot.java given: run -Paot");

    /** A line of {@code -Xlog:class+load}: {@code [info][class,load] a.b.C source: shared objects file}. */
    private static final Pattern LOADED =
            Pattern.compile("\\[class,load\\s*\\] (\\S+) source: (.+)$", Pattern.MULTILINE);

    private final Path cache = BuildPaths.buildDir().resolve(AotTraining.CACHE);

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void theWorkerStartsWithTheCacheAndHandlesRequestsOnClassesFromIt() throws IOException {
        assertThat(cache).as("the trained cache").isRegularFile().isNotEmptyFile();

        String log = handleRequestsWith("aot-cached", "-XX:AOTCache=" + cache);

        assertThat(log).contains("Opened AOT cache " + cache);
        assertThat(log).doesNotContain("[error", "[warning][aot");
        List<String> fromCache = workerClasses(log, true);
        List<String> fromJars = workerClasses(log, false);
        assertThat(fromCache)
                .as("the request path's classes, trained by the requests of the training run")
                .contains(
                        "io.imageworker.gateway.GatewayAnswer",
                        "io.imageworker.image.ImageInspector",
                        "io.imageworker.messaging.results.ResultEnvelope");
        assertThat(fromCache.size())
                .as(
                        "the worker's classes from the cache (%d) against those from its jars: %s",
                        fromCache.size(), fromJars)
                .isGreaterThan(9 * fromJars.size());
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void aCacheWrittenForAnotherConfigurationCostsAWarningNotTheStart() throws IOException {
        // Compressed object pointers off: the cache was written with them on, so the JVM cannot map it.
        String log = handleRequestsWith("aot-mismatched", "-XX:AOTCache=" + cache, "-XX:-UseCompressedOops");

        assertThat(log).containsPattern("\\[(warning|error)\\s*\\]\\[aot");
        assertThat(workerClasses(log, true)).as("classes from the cache").isEmpty();
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void aDamagedCacheCostsAWarningNotTheStart(@TempDir Path dir) throws IOException {
        Path damaged = dir.resolve("image-worker.aot");
        byte[] bytes = Files.readAllBytes(cache);
        for (int i = 0; i < bytes.length; i += 4096) {
            bytes[i] ^= 0x5a;
        }
        Files.write(damaged, bytes);

        String log = handleRequestsWith("aot-damaged", "-XX:AOTCache=" + damaged);

        assertThat(log).containsPattern("\\[(warning|error)\\s*\\]\\[aot");
        assertThat(workerClasses(log, true)).as("classes from the cache").isEmpty();
    }

    /**
     * Starts the packaged worker on the JVM that trained the cache, with {@code options} and the JVM's logs of the
     * cache and of each class it loads, has it handle a few requests, stops it, and returns its log.
     */
    private static String handleRequestsWith(String name, String... options) throws IOException {
        List<String> command = new ArrayList<>(List.of(JAVA));
        command.addAll(List.of(options));
        command.addAll(List.of(
                "-Xlog:aot", "-Xlog:class+load", "-jar", BuildPaths.workerJar().toString()));
        try (LaunchStack stack = LaunchStack.onSharedServers(Latency.fixedMillis(50));
                WorkerProcess worker = WorkerProcess.builder()
                        .name(name)
                        .env(stack.workerEnvironment(4))
                        .command(command)
                        .build();
                PipelineClient client = PipelineClient.on(stack)) {
            worker.start();
            List<String> ids = List.copyOf(client.publish(name, 3, id -> PipelineClient.request(id, "a cached start"))
                    .keySet());
            client.awaitEnded(ids, Duration.ofMinutes(1));
            assertThat(client.firstEvents(ids).values())
                    .as("every request completed")
                    .allMatch(PipelineClient.Result::completed);
            worker.stop();
            return Files.readString(worker.logFile());
        }
    }

    /**
     * The worker's own classes ({@code io.imageworker}) the log says were loaded from the cache, or not from it; not
     * the lambda proxies the JVM spins at run time, which JDK 25 caches only for the JDK's own class loaders (the
     * worker's classes are loaded by Quarkus's).
     */
    private static List<String> workerClasses(String log, boolean fromCache) {
        List<String> classes = new ArrayList<>();
        Matcher loaded = LOADED.matcher(log);
        while (loaded.find()) {
            if (loaded.group(1).startsWith("io.imageworker.")
                    && !loaded.group(1).contains("$$Lambda")
                    && loaded.group(2).startsWith("shared objects file") == fromCache) {
                classes.add(loaded.group(1));
            }
        }
        return classes;
    }
}
