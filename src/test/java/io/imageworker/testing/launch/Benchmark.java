package io.imageworker.testing.launch;

import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;

/**
 * Throughput of the packaged worker against a gateway of fixed latency: starts an embedded broker and S3 server (in
 * a temporary directory, deleted at the end), the simulator, and the worker with {@code IMAGE_WORKER_CONCURRENCY} as
 * given; publishes N generate requests as fast as the producer goes, waits for N terminal events and prints the
 * figures. The ideal time is {@code ceil(N / concurrency) x latency}: the gateway is the bottleneck by design, so a
 * worker that keeps {@code concurrency} calls in flight all the time comes close to it.
 *
 * <p>Run it with {@code ./mvnw -Pbench} and, for other figures, {@code -Dbench.requests=640 -Dbench.concurrency=64
 * -Dbench.latency-ms=2000}. More: {@code bench.warmup} (requests sent and awaited before the measured run, default
 * 0), {@code bench.worker-jvm-options} (space-separated), {@code bench.timeout-s} (0, the default: three times the ideal plus
 * 60 s), {@code bench.echo-worker}.
 *
 * <p>Exit status 0 when every request completed and the simulator never saw more than {@code concurrency} image calls
 * at once; 1 when a request is missing or failed, or the peak exceeded the limit.
 */
public final class Benchmark {

    /** JVM options of the worker unless {@code bench.worker-jvm-options} says otherwise. */
    static final String DEFAULT_WORKER_JVM_OPTIONS = "-Xms256m -Xmx1g -XX:+UseParallelGC -XX:+ExitOnOutOfMemoryError";

    private Benchmark() {}

    public static void main(String[] args) throws IOException {
        LaunchLogging.quiet();
        int requests = Integer.getInteger("bench.requests", 640);
        int concurrency = Integer.getInteger("bench.concurrency", 64);
        long latencyMs = Long.getLong("bench.latency-ms", 2_000);
        int warmup = Integer.getInteger("bench.warmup", 0);
        List<String> jvmOptions = Arrays.stream(
                        System.getProperty("bench.worker-jvm-options", DEFAULT_WORKER_JVM_OPTIONS)
                                .trim()
                                .split("\\s+"))
                .filter(option -> !option.isBlank())
                .toList();
        Duration ideal = Duration.ofMillis(((requests + concurrency - 1) / concurrency) * latencyMs);
        long timeoutSeconds = Long.getLong("bench.timeout-s", 0);
        Duration timeout = Duration.ofSeconds(timeoutSeconds > 0 ? timeoutSeconds : ideal.toSeconds() * 3 + 60);

        Path dataDir = Files.createTempDirectory("image-worker-bench");
        int status;
        try (LaunchStack stack = LaunchStack.startEmbedded(
                dataDir,
                0,
                0,
                SimulatorSettings.defaults()
                        .withLatency(Latency.fixedMillis(latencyMs))
                        .withQuota(SimulatorSettings.UNLIMITED_QUOTA))) {
            WorkerProcess worker = WorkerProcess.builder()
                    .name("bench-worker")
                    .env(stack.workerEnvironment(concurrency))
                    .jvmOptions(jvmOptions)
                    .echo(Boolean.getBoolean("bench.echo-worker"))
                    .build();
            try {
                say("starting the worker: concurrency " + concurrency + ", JVM " + String.join(" ", jvmOptions)
                        + ", log " + worker.logFile());
                long startNanos = System.nanoTime();
                worker.start();
                say(String.format("worker ready in %.1f s", (System.nanoTime() - startNanos) / 1e9));
                try (PipelineClient client = new PipelineClient(
                        stack.infrastructure().kafkaBootstrapServers(), stack.topics(), false, result -> {})) {
                    if (warmup > 0) {
                        say("warm-up: " + warmup + " requests");
                        run(client, worker, "warmup", warmup, timeout);
                        stack.gateway().reset();
                    }
                    say(String.format(
                            "measured run: %d requests, concurrency %d, gateway latency %d ms (ideal %.1f s)",
                            requests, concurrency, latencyMs, ideal.toMillis() / 1e3));
                    Run run = run(client, worker, "bench", requests, timeout);
                    status = report(run, stack.gateway(), concurrency, latencyMs, ideal, worker);
                }
            } finally {
                worker.stop();
            }
        } finally {
            deleteTree(dataDir);
        }
        System.exit(status);
    }

    /** Publishes {@code count} requests at once and waits for a terminal event of each (or the timeout). */
    private static Run run(PipelineClient client, WorkerProcess worker, String prefix, int count, Duration timeout) {
        String runId = UUID.randomUUID().toString().substring(0, 8);
        Map<String, Long> sentAt = new LinkedHashMap<>();
        List<CompletableFuture<?>> acks = new ArrayList<>(count);
        Instant firstAt = Instant.now();
        long first = System.nanoTime();
        for (int i = 1; i <= count; i++) {
            String id = prefix + "-" + runId + "-" + i;
            sentAt.put(id, System.nanoTime());
            acks.add(client.sendAsync(
                    id,
                    "{\"requestId\":\"" + id + "\",\"prompt\":\"benchmark image " + id + "\",\"size\":\"1024x1024\"}"));
        }
        client.flush();
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new))
                .orTimeout(60, TimeUnit.SECONDS)
                .join();
        long published = System.nanoTime();
        try {
            await(prefix + " results")
                    .atMost(timeout)
                    .pollInterval(Duration.ofMillis(50))
                    .failFast("the worker exited", () -> !worker.isAlive())
                    .until(() -> terminalIds(client, sentAt).size() == count);
        } catch (ConditionTimeoutException | TerminalFailureException e) {
            say("not every request ended: " + e.getMessage());
        }
        return new Run(sentAt, firstAt, first, published, client.results());
    }

    private static Map<String, PipelineClient.Result> terminalIds(PipelineClient client, Map<String, Long> sentAt) {
        Map<String, PipelineClient.Result> firsts = new HashMap<>();
        for (PipelineClient.Result result : client.results()) {
            if (sentAt.containsKey(result.requestId())) {
                firsts.putIfAbsent(result.requestId(), result);
            }
        }
        return firsts;
    }

    private static int report(
            Run run, GatewaySimulator gateway, int concurrency, long latencyMs, Duration ideal, WorkerProcess worker) {
        Map<String, PipelineClient.Result> firsts = new HashMap<>();
        Map<String, Integer> events = new HashMap<>();
        for (PipelineClient.Result result : run.results()) {
            if (run.sentAt().containsKey(result.requestId())) {
                firsts.putIfAbsent(result.requestId(), result);
                events.merge(result.requestId(), 1, Integer::sum);
            }
        }
        int requests = run.sentAt().size();
        long completed = firsts.values().stream()
                .filter(PipelineClient.Result::completed)
                .count();
        long failed = firsts.size() - completed;
        int missing = requests - firsts.size();
        long duplicates = events.values().stream().filter(n -> n > 1).count();
        long last = firsts.values().stream()
                .mapToLong(PipelineClient.Result::receivedNanos)
                .max()
                .orElse(run.firstSendNanos());
        double wallSeconds = (last - run.firstSendNanos()) / 1e9;
        long[] latencies = firsts.entrySet().stream()
                .mapToLong(
                        entry -> entry.getValue().receivedNanos() - run.sentAt().get(entry.getKey()))
                .sorted()
                .toArray();
        List<RecordedCall> calls = gateway.imageCalls();
        int peak = gateway.maxConcurrentImageCalls();
        Map<String, Long> failures = firsts.values().stream()
                .filter(result -> !result.completed())
                .collect(Collectors.groupingBy(PipelineClient.Result::errorCode, Collectors.counting()));

        System.out.println("=".repeat(72));
        System.out.println(" image-worker benchmark");
        System.out.printf(" requests              %d%n", requests);
        System.out.printf(" completed             %d%n", completed);
        System.out.printf(" failed                %d%s%n", failed, failures.isEmpty() ? "" : "  " + failures);
        System.out.printf(" missing               %d%n", missing);
        System.out.printf(" duplicate events      %d%n", duplicates);
        System.out.printf(" gateway image calls   %d%n", calls.size());
        System.out.printf(
                " publish time          %.2f s (first send to last broker acknowledgement)%n",
                (run.publishedNanos() - run.firstSendNanos()) / 1e9);
        System.out.printf(" wall time             %.2f s (first send to last result)%n", wallSeconds);
        System.out.printf(
                " throughput            %.1f requests/s%n", wallSeconds > 0 ? firsts.size() / wallSeconds : 0);
        System.out.printf(
                " ideal time            %.2f s (ceil(%d / %d) x %d ms)%n",
                ideal.toMillis() / 1e3, requests, concurrency, latencyMs);
        System.out.printf(" efficiency            %.0f %% of ideal%n", 100 * ideal.toMillis() / 1e3 / wallSeconds);
        System.out.printf(" peak concurrent calls %d (limit %d)%n", peak, concurrency);
        calls.stream()
                .map(RecordedCall::arrivedAt)
                .min(Instant::compareTo)
                .ifPresent(firstCall -> System.out.printf(
                        " first gateway call    %.2f s after the first send%n",
                        Duration.between(run.firstSendAt(), firstCall).toMillis() / 1e3));
        calls.stream()
                .map(RecordedCall::finishedAt)
                .filter(java.util.Objects::nonNull)
                .max(Instant::compareTo)
                .ifPresent(lastEnd -> System.out.printf(
                        " last gateway answer   %.2f s after the first send%n",
                        Duration.between(run.firstSendAt(), lastEnd).toMillis() / 1e3));
        System.out.printf(
                " end-to-end latency    p50 %.2f s, p95 %.2f s, max %.2f s%n",
                percentile(latencies, 50), percentile(latencies, 95), percentile(latencies, 100));
        System.out.println(" worker log            " + worker.logFile());
        System.out.println("=".repeat(72));
        List<String> problems = new ArrayList<>();
        if (missing > 0) {
            problems.add(missing + " request(s) without a terminal event");
        }
        if (failed > 0) {
            problems.add(failed + " request(s) failed: " + failures);
        }
        if (peak > concurrency) {
            problems.add("the gateway saw " + peak + " calls at once, above the limit " + concurrency);
        }
        if (problems.isEmpty()) {
            System.out.println(" RESULT: ok");
            return 0;
        }
        System.out.println(" RESULT: FAILED: " + String.join("; ", problems));
        return 1;
    }

    /** The nearest-rank percentile of sorted nanosecond values, in seconds. */
    private static double percentile(long[] sorted, int percent) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(percent / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1e9;
    }

    private static void say(String message) {
        System.out.println("[bench] " + message);
        System.out.flush();
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            System.err.println("could not delete " + dir + ": " + e);
        }
    }

    /**
     * One batch of requests.
     *
     * @param sentAt each request's id and {@link System#nanoTime()} just before it was handed to the producer
     * @param firstSendAt when the first was handed to the producer, by the wall clock (the simulator's records use it)
     * @param firstSendNanos when the first was handed to the producer
     * @param publishedNanos when the broker had acknowledged them all
     * @param results every event received by the end
     */
    private record Run(
            Map<String, Long> sentAt,
            Instant firstSendAt,
            long firstSendNanos,
            long publishedNanos,
            List<PipelineClient.Result> results) {}
}
