package io.imageworker.testing.launch;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.Infrastructure;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What the fleet's ordinary life costs when calls are long ({@code ./mvnw -Pbench -Dbench.regime=rebalance}): the
 * packaged worker as replicas of one group on an embedded broker and store, each with a gateway simulator of its own
 * whose every call takes {@code bench.call-s} (10 s), the gateway timeout half a call longer and the infrastructure
 * patience a third of a call, the graces left to their defaults (derived from those two, as the chart leaves them).
 * Five steps, each with its own backlog of three rounds of the fleet's calls, the change made once calls are in flight
 * on the replicas it touches:
 *
 * <ul>
 *   <li>{@code steady}: two replicas, no change (the yardstick for the others' wait);
 *   <li>{@code scale-out}: a third replica joins;
 *   <li>{@code rollout}: a fourth starts (the surge), then the first is stopped with SIGTERM;
 *   <li>{@code scale-in}: one more is stopped with SIGTERM;
 *   <li>{@code kill -9}: one of the two left is killed with SIGKILL.
 * </ul>
 *
 * <p>For each: the calls in flight on the replicas the change touched when it came, the extra calls (calls beyond one
 * per request, from the gateways' records), repeated events for a {@code read_committed} reader, and how long results
 * waited (from publication to the terminal event: p50, p95, max).
 */
final class RebalanceBenchmark {

    private static final int PARTITIONS = 6;
    private static final Duration WITHIN = Duration.ofMinutes(5);

    private RebalanceBenchmark() {}

    /** Runs the five steps and prints their figures; false when a request got no terminal event. */
    static boolean run() throws IOException {
        Settings settings = Settings.fromProperties();
        Benchmark.say("rebalance: %s", settings);
        List<Row> rows = Benchmark.onEmbeddedInfrastructure(
                "image-worker-bench-rebalance", (infrastructure, dataDir) -> run(infrastructure, settings));
        return Benchmark.printTableAndVerdict(
                "| step | requests | ended | calls in flight on the replicas changed | on partitions revoked: waited"
                        + " for / given up / handed over with no call | extra calls | repeated events"
                        + " | result wait p50 s | p95 s | max s |",
                rows,
                "requests without a terminal event");
    }

    private static List<Row> run(Infrastructure infrastructure, Settings settings) {
        SimulatorSettings simulator = SimulatorSettings.unlimited(Latency.fixed(settings.call()));
        List<Row> rows = new ArrayList<>();
        try (LaunchStack stack = LaunchStack.on(infrastructure, simulator, PARTITIONS);
                PipelineClient client = PipelineClient.on(stack);
                Fleet fleet = new Fleet(stack, PARTITIONS)) {
            for (String name : List.of("r1", "r2", "r3", "r4")) {
                fleet.add(name, simulator, settings.concurrency(), settings.jvmOptions(), settings::apply);
            }
            fleet.start("r1", "r2");
            fleet.awaitAssignment(Set.of("r1", "r2"), WITHIN);
            rows.add(step(stack, client, fleet, settings, "steady", 2, List.of("r1", "r2"), () -> {}));
            rows.add(step(stack, client, fleet, settings, "scale-out", 2, List.of("r1", "r2"), () -> {
                fleet.start("r3");
                fleet.awaitAssignment(Set.of("r1", "r2", "r3"), WITHIN);
            }));
            rows.add(step(stack, client, fleet, settings, "rollout", 3, List.of("r1"), () -> {
                fleet.start("r4");
                fleet.awaitAssignment(Set.of("r1", "r2", "r3", "r4"), WITHIN);
                fleet.replica("r1").stop();
                fleet.awaitAssignment(Set.of("r2", "r3", "r4"), WITHIN);
            }));
            rows.add(step(stack, client, fleet, settings, "scale-in", 3, List.of("r2"), () -> {
                fleet.replica("r2").stop();
                fleet.awaitAssignment(Set.of("r3", "r4"), WITHIN);
            }));
            rows.add(step(stack, client, fleet, settings, "kill -9", 2, List.of("r3"), () -> {
                fleet.replica("r3").kill();
                fleet.awaitAssignment(Set.of("r4"), WITHIN);
            }));
        }
        return rows;
    }

    /**
     * One step: three rounds of the calls of {@code replicas} replicas published at once; once the gateways of {@code
     * changed} have their calls in flight, {@code change}; then every request's end awaited and counted.
     */
    private static Row step(
            LaunchStack stack,
            PipelineClient client,
            Fleet fleet,
            Settings settings,
            String name,
            int replicas,
            List<String> changed,
            Runnable change) {
        int slots = replicas * settings.concurrency();
        Map<String, Instant> sent = PriorityBenchmark.publish(
                client, stack.topics().request(), name.replace(' ', '-'), 3 * slots, PriorityBenchmark::request);
        fleet.awaitCallsInFlight(changed, (long) settings.concurrency() * changed.size(), WITHIN);
        long inFlight = fleet.callsInFlight(changed);
        Benchmark.say("%s: %d requests, %d calls in flight on %s", name, sent.size(), inFlight, changed);
        Map<String, Integer> marks = fleet.logMarks();
        change.run();
        PriorityBenchmark.awaitEnded(client, sent.keySet(), WITHIN.multipliedBy(2));
        Map<String, PipelineClient.Result> firsts = client.firstEvents(sent.keySet());
        long[] waits = Benchmark.sortedMillis(
                sent,
                firsts.values().stream()
                        .collect(java.util.stream.Collectors.toMap(
                                PipelineClient.Result::requestId, PipelineClient.Result::createdAt)));
        int extraCalls =
                Fleet.beyondOne(Fleet.counts(PipelineClient.byRequest(fleet.allCalls(), sent.keySet())), id -> true);
        int repeats = Fleet.beyondOne(Fleet.counts(client.eventsByRequest(sent.keySet())), id -> true);
        // Every replica's: one stopping also releases its partitions, after its drain (nothing left to wait for).
        Fleet.Released released = fleet.releasedSince(marks, fleet.replicas().keySet());
        Row row = new Row(
                name,
                sent.size(),
                firsts.size(),
                inFlight,
                released.finished(),
                released.givenUp(),
                released.handedOver(),
                extraCalls,
                repeats,
                Benchmark.percentile(waits, 50),
                Benchmark.percentile(waits, 95),
                waits.length == 0 ? -1 : waits[waits.length - 1]);
        Benchmark.say("%s", row.describe());
        return row;
    }

    /** The figures of one step. */
    record Row(
            String step,
            int sent,
            int ended,
            long callsInFlight,
            int waitedFor,
            int givenUp,
            int handedOver,
            int extraCalls,
            int repeats,
            long waitP50,
            long waitP95,
            long waitMax)
            implements Benchmark.SentAndEnded {

        @Override
        public String describe() {
            return String.format(
                    Locale.ROOT,
                    "| %s | %d | %d | %d | %d / %d / %d | %d | %d | %.1f | %.1f | %.1f |",
                    step,
                    sent,
                    ended,
                    callsInFlight,
                    waitedFor,
                    givenUp,
                    handedOver,
                    extraCalls,
                    repeats,
                    waitP50 / 1000.0,
                    waitP95 / 1000.0,
                    waitMax / 1000.0);
        }
    }

    /**
     * What the steps are made of: {@code bench.call-s}, {@code bench.concurrency}, {@code bench.worker-jvm-options},
     * and {@code bench.rebalance-grace} (empty: the worker's default, derived from the gateway timeout and patience).
     */
    record Settings(Duration call, int concurrency, List<String> jvmOptions, String rebalanceGrace) {

        static Settings fromProperties() {
            return new Settings(
                    Duration.ofSeconds(Long.parseLong(PriorityBenchmark.Settings.orDefault("bench.call-s", "10"))),
                    Integer.parseInt(PriorityBenchmark.Settings.orDefault("bench.concurrency", "4")),
                    Benchmark.words(PriorityBenchmark.Settings.orDefault(
                            "bench.worker-jvm-options", "-Xms128m -Xmx256m -XX:+ExitOnOutOfMemoryError")),
                    PriorityBenchmark.Settings.orDefault("bench.rebalance-grace", ""));
        }

        /** A replica's settings: the gateway timeout half a call longer than a call, the patience a third of one. */
        WorkerProcess.Builder apply(WorkerProcess.Builder worker) {
            worker.env(
                            "IMAGE_WORKER_GATEWAY_TIMEOUT",
                            call.multipliedBy(3).dividedBy(2).toMillis() + "ms")
                    .env(
                            "IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE",
                            call.dividedBy(3).toMillis() + "ms");
            return rebalanceGrace.isEmpty() ? worker : worker.env("IMAGE_WORKER_REBALANCE_GRACE", rebalanceGrace);
        }

        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "calls of %d s (timeout %.1f s, patience %.1f s), rebalance grace %s, concurrency %d per replica,"
                            + " %d partitions",
                    call.toSeconds(),
                    call.toMillis() * 1.5 / 1000,
                    call.toMillis() / 3000.0,
                    rebalanceGrace.isEmpty() ? "derived" : rebalanceGrace,
                    concurrency,
                    PARTITIONS);
        }
    }
}
