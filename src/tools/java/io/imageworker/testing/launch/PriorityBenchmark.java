package io.imageworker.testing.launch;

import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.Infrastructure;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The priority lane measured ({@code ./mvnw -Pbench -Dbench.regime=priority}): the packaged worker on an embedded
 * broker and store, the gateway simulator with a fixed latency, three runs:
 *
 * <ul>
 *   <li>{@code trickle, lane}: the normal lane saturated ({@code bench.priority-backlog} requests published at once,
 *       thousands waiting), then priority requests at a steady trickle ({@code bench.priority-rate} a second for
 *       {@code bench.priority-seconds}) on the priority topic;
 *   <li>{@code trickle, no lane}: the same, the trickle published to the request topic of a worker without a priority
 *       lane;
 *   <li>{@code flood, lane}: the normal backlog, then {@code bench.priority-flood} priority requests at once: both lanes
 *       wait, and the normal lane's share of the calls shows the least share it keeps.
 * </ul>
 *
 * <p>A request's queueing time is from its publication to the gateway's receipt of its call (the simulator's record,
 * on this JVM's clock): the time in Kafka, in the worker's intake and waiting for a gateway slot. The normal lane's
 * share is its part of the gateway calls that arrived while the priority requests were being sent (the trickle), or
 * while the flood was being served. Settings: {@code bench.concurrency} (16), {@code bench.latency-ms} (200),
 * {@code bench.worker-jvm-options}; the worker's own {@code IMAGE_WORKER_PRIORITY_MIN_SHARE} (0.2) unless {@code
 * bench.min-share} is given.
 */
final class PriorityBenchmark {

    private PriorityBenchmark() {}

    /** Runs the three and prints their figures; false when a priority request got no terminal event. */
    static boolean run() throws IOException {
        Settings settings = Settings.fromProperties();
        Benchmark.say("priority lane: %s", settings);
        List<Row> rows = Benchmark.onEmbeddedInfrastructure(
                "image-worker-bench-priority",
                (infrastructure, dataDir) -> List.of(
                        run(infrastructure, settings, Mode.TRICKLE_LANE, dataDir),
                        run(infrastructure, settings, Mode.TRICKLE_NO_LANE, dataDir),
                        run(infrastructure, settings, Mode.FLOOD_LANE, dataDir)));
        return Benchmark.printTableAndVerdict(
                "| run | priority requests | ended | queueing p50 ms | p95 ms | max ms | normal lane's share of"
                        + " the calls meanwhile | normal calls/s meanwhile |",
                rows,
                "priority requests without a terminal event");
    }

    private static Row run(Infrastructure infrastructure, Settings settings, Mode mode, Path dataDir) {
        SimulatorSettings simulator = SimulatorSettings.unlimited(Latency.fixedMillis(settings.latencyMs()));
        try (LaunchStack stack = LaunchStack.on(infrastructure, simulator)) {
            String priorityTopic = stack.topics().request() + "-priority";
            infrastructure.kafka().createTopics(priorityTopic);
            WorkerProcess.Builder builder =
                    Benchmark.worker(stack, "bench-priority", settings.concurrency(), settings.jvmOptions());
            if (mode.lane()) {
                builder.env("IMAGE_WORKER_TOPIC_REQUEST_PRIORITY", priorityTopic);
            }
            if (settings.minShare() != null) {
                builder.env("IMAGE_WORKER_PRIORITY_MIN_SHARE", settings.minShare());
            }
            WorkerProcess worker = builder.build();
            String urgentTopic = mode.lane() ? priorityTopic : stack.topics().request();
            try (PipelineClient client =
                    new PipelineClient(infrastructure.kafkaBootstrapServers(), stack.topics(), false, result -> {})) {
                Benchmark.say("%s: starting (log %s)", mode.label(), worker.logFile());
                worker.start();
                // Warm up both lanes: the JIT, the connections, and the priority consumer's partitions.
                Map<String, Instant> warm =
                        new HashMap<>(publish(client, stack.topics().request(), "warm", 50));
                warm.putAll(publish(client, urgentTopic, "warm-urgent", 10));
                awaitEnded(client, warm.keySet(), Duration.ofMinutes(2));
                stack.gateway().reset();

                publish(client, stack.topics().request(), "normal", settings.backlog());
                await("the normal lane saturated")
                        .atMost(Duration.ofMinutes(1))
                        .until(() -> stack.gateway().imageCallsInFlight() >= settings.concurrency());
                Map<String, Instant> urgent = mode == Mode.FLOOD_LANE
                        ? publish(client, urgentTopic, "urgent", settings.flood())
                        : trickle(client, urgentTopic, settings);
                Instant lastSent =
                        urgent.values().stream().max(Instant::compareTo).orElseThrow();
                Duration patience = Duration.ofSeconds(
                        120 + 3L * settings.backlog() * settings.latencyMs() / settings.concurrency() / 1000);
                awaitEnded(client, urgent.keySet(), patience);
                Row row = measure(mode, urgent, lastSent, stack.gateway().imageCalls(), client);
                Benchmark.say("%s", row.describe());
                return row;
            } finally {
                // The rest of the normal backlog is of no interest: no need to wait for it.
                worker.kill();
            }
        }
    }

    /** Publishes {@code count} requests at once; their publication instants by id. */
    private static Map<String, Instant> publish(PipelineClient client, String topic, String prefix, int count) {
        return publish(client, topic, prefix, count, PriorityBenchmark::request);
    }

    /** Publishes {@code count} requests at once, each {@code json} of its id; their publication instants by id. */
    static Map<String, Instant> publish(
            PipelineClient client,
            String topic,
            String prefix,
            int count,
            java.util.function.Function<String, String> json) {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Map<String, Instant> sent = new ConcurrentHashMap<>();
        List<CompletableFuture<?>> acks = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            String id = prefix + "-" + run + "-" + i;
            sent.put(id, Instant.now());
            acks.add(client.sendAsync(topic, id, json.apply(id)));
        }
        client.flush();
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new))
                .orTimeout(120, TimeUnit.SECONDS)
                .join();
        return sent;
    }

    /** Publishes priority requests one at a time at the trickle's rate; their publication instants by id. */
    private static Map<String, Instant> trickle(PipelineClient client, String topic, Settings settings) {
        String run = UUID.randomUUID().toString().substring(0, 8);
        int total = (int) Math.round(settings.rate() * settings.seconds());
        Map<String, Instant> sent = new ConcurrentHashMap<>();
        AtomicInteger next = new AtomicInteger();
        ScheduledExecutorService pace = Executors.newSingleThreadScheduledExecutor();
        try {
            pace.scheduleAtFixedRate(
                    () -> {
                        int i = next.incrementAndGet();
                        if (i <= total) {
                            String id = "urgent-" + run + "-" + i;
                            sent.put(id, Instant.now());
                            client.sendAsync(topic, id, request(id));
                            client.flush();
                        }
                    },
                    0,
                    Math.round(1_000_000 / settings.rate()),
                    TimeUnit.MICROSECONDS);
            await("the trickle sent")
                    .atMost(Duration.ofSeconds(settings.seconds() + 30L))
                    .until(() -> sent.size() >= total);
        } finally {
            pace.shutdownNow();
        }
        return sent;
    }

    static String request(String id) {
        return "{\"requestId\":\"" + id + "\",\"prompt\":\"benchmark image " + id + "\",\"size\":\"1024x1024\"}";
    }

    static void awaitEnded(PipelineClient client, Set<String> ids, Duration within) {
        try {
            await("results")
                    .atMost(within)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> client.firstEvents(ids).size() == ids.size());
        } catch (ConditionTimeoutException e) {
            Benchmark.say("not every request ended: %s", e.getMessage());
        }
    }

    private static Row measure(
            Mode mode, Map<String, Instant> urgent, Instant lastSent, List<RecordedCall> calls, PipelineClient client) {
        Map<String, Instant> firstCall = PipelineClient.firstCalls(calls, urgent.keySet());
        long[] queued = Benchmark.sortedMillis(urgent, firstCall);
        // The window: from the first priority request's publication to the end of the trickle, or to the flood's last
        // call (while priority requests were waiting).
        Instant from = urgent.values().stream().min(Instant::compareTo).orElseThrow();
        Instant to = mode == Mode.FLOOD_LANE
                ? firstCall.values().stream().max(Instant::compareTo).orElse(lastSent)
                : lastSent;
        long inWindow = 0;
        long normalInWindow = 0;
        for (RecordedCall call : calls) {
            Instant at = call.arrivedAt();
            if (!at.isBefore(from) && !at.isAfter(to)) {
                inWindow++;
                if (PipelineClient.requestOf(call, urgent.keySet()) == null) {
                    normalInWindow++;
                }
            }
        }
        double seconds = Math.max(0.001, Duration.between(from, to).toMillis() / 1e3);
        return new Row(
                mode,
                urgent.size(),
                client.firstEvents(urgent.keySet()).size(),
                Benchmark.percentile(queued, 50),
                Benchmark.percentile(queued, 95),
                queued.length == 0 ? -1 : queued[queued.length - 1],
                inWindow == 0 ? Double.NaN : (double) normalInWindow / inWindow,
                normalInWindow / seconds);
    }

    /** The three runs. */
    enum Mode {
        TRICKLE_LANE("trickle, priority lane", true),
        TRICKLE_NO_LANE("trickle, no priority lane (same topic as the backlog)", false),
        FLOOD_LANE("flood, priority lane", true);

        private final String label;
        private final boolean lane;

        Mode(String label, boolean lane) {
            this.label = label;
            this.lane = lane;
        }

        String label() {
            return label;
        }

        boolean lane() {
            return lane;
        }
    }

    /** The figures of one run. */
    record Row(
            Mode mode,
            int sent,
            int ended,
            long p50Ms,
            long p95Ms,
            long maxMs,
            double normalShare,
            double normalCallsPerSecond)
            implements Benchmark.SentAndEnded {

        @Override
        public String describe() {
            return String.format(
                    Locale.ROOT,
                    "| %s | %d | %d | %d | %d | %d | %.2f | %.1f |",
                    mode.label(),
                    sent,
                    ended,
                    p50Ms,
                    p95Ms,
                    maxMs,
                    normalShare,
                    normalCallsPerSecond);
        }
    }

    /** What the runs are made of. */
    record Settings(
            int concurrency,
            long latencyMs,
            int backlog,
            double rate,
            int seconds,
            int flood,
            String minShare,
            List<String> jvmOptions) {

        static Settings fromProperties() {
            return new Settings(
                    Integer.getInteger("bench.concurrency", 16),
                    Long.getLong("bench.latency-ms", 200),
                    Integer.getInteger("bench.priority-backlog", 3000),
                    Double.parseDouble(orDefault("bench.priority-rate", "2")),
                    Integer.getInteger("bench.priority-seconds", 15),
                    Integer.getInteger("bench.priority-flood", 1000),
                    orDefault("bench.min-share", null),
                    Benchmark.words(orDefault("bench.worker-jvm-options", Benchmark.DEFAULT_JVM_OPTIONS)));
        }

        /** A property's value, or {@code otherwise} when it is unset or empty (the Maven profile passes empty ones). */
        static String orDefault(String property, String otherwise) {
            String value = System.getProperty(property, "");
            return value.isBlank() ? otherwise : value.trim();
        }

        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "concurrency %d, latency %d ms, normal backlog %d, trickle %.1f/s for %d s, flood %d, least share %s",
                    concurrency,
                    latencyMs,
                    backlog,
                    rate,
                    seconds,
                    flood,
                    minShare == null ? "the worker's default" : minShare);
        }
    }
}
