package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.launch.Fleet;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.SharedServersFirst;
import io.imageworker.testing.launch.TakesAbout;
import io.imageworker.testing.launch.WorkerProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The fleet's ordinary life with calls of real length, scaled down: every gateway call takes {@link #CALL} (8 s),
 * longer than every setting that counts time against a record and is not sized from the gateway timeout: the consumer
 * session (6 s), the results' transaction timeout (3 s), the commit interval (1 s). What is sized from it is left at
 * the worker's defaults, as the chart leaves them: the rebalance grace and the shutdown grace (a whole call, 12 s, plus
 * the infrastructure patience, 4 s).
 *
 * <p>Two replicas of the packaged worker share a request topic of six partitions; while their calls are in flight a
 * third joins (a KEDA scale-out, a rollout's surge), then one is stopped with SIGTERM (a rollout, a scale-in), then
 * another (the scale-in down to one). Each replica calls a gateway simulator of its own, so that every call is counted
 * where it was made. What it must cost: every request ends in exactly one terminal event for a {@code read_committed}
 * reader, each made with exactly one gateway call, no worker restarted or unhealthy, and every offset committed.
 *
 * <p>Before the rebalance waited for the calls in flight up to a whole call (a 60 s grace against calls of up to 180
 * s: 3 s against 8 s here), a join gave the calls still running on the partitions that moved to their new owner, which
 * made them again.
 */
@ExtendWith(SharedServersFirst.class)
@TakesAbout(seconds = 106)
class LongCallsIT {

    private static final int PARTITIONS = 6;
    private static final int CONCURRENCY = 4;
    private static final Duration CALL = Duration.ofSeconds(8);
    private static final Duration WITHIN = Duration.ofSeconds(120);
    /** Per phase after the join: three rounds of two replicas' calls, so that calls are in flight at each change. */
    private static final int BATCH = 24;

    /** SmallRye's warning of a record waiting past the max age, and the failure it passes on for a stuck one. */
    private static final Pattern STUCK = Pattern.compile("SRMSG18231|TooManyMessagesWithoutAck");

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void aJoinAStopAndAScaleInMidCallMakeNoCallTwice() throws Exception {
        SimulatorSettings settings = SimulatorSettings.unlimited(Latency.fixed(CALL));
        try (LaunchStack stack = LaunchStack.onSharedServers(settings, PARTITIONS);
                PipelineClient client = PipelineClient.on(stack);
                Fleet fleet = new Fleet(stack, PARTITIONS)) {
            for (String name : List.of("long-a", "long-b", "long-c")) {
                fleet.add(name, settings, CONCURRENCY, JVM_OPTIONS, LongCallsIT::scaledSettings);
            }
            fleet.start("long-a", "long-b");
            fleet.awaitAssignment(Set.of("long-a", "long-b"), WITHIN);
            Set<String> sent = ConcurrentHashMap.newKeySet();

            // A replica joins while calls are in flight on every partition, however long it takes to start: a wave of
            // requests on every partition every half call (more than two replicas do) until the group has settled.
            ScheduledExecutorService waves = Executors.newSingleThreadScheduledExecutor();
            waves.scheduleWithFixedDelay(
                    () -> sent.addAll(
                            client.publishOnEveryPartition("long-join", PARTITIONS, PARTITIONS, LongCallsIT::request)),
                    0,
                    CALL.toMillis() / 2,
                    TimeUnit.MILLISECONDS);
            Map<String, Integer> joinMark;
            try {
                fleet.awaitCallsInFlight(List.of("long-a", "long-b"), 2 * CONCURRENCY, WITHIN);
                joinMark = fleet.logMarks();
                fleet.start("long-c");
                fleet.awaitAssignment(Set.of("long-a", "long-b", "long-c"), WITHIN);
            } finally {
                waves.shutdown();
                assertThat(waves.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
            }
            client.awaitEnded(sent, WITHIN);
            // Before the next phase: a replica stopping logs the release of all its partitions too.
            Fleet.Released join = fleet.releasedSince(joinMark, List.of("long-a", "long-b"));

            // A replica is stopped (SIGTERM) with calls in flight: a rollout, or a scale-in.
            // On every partition in turn, so that each replica gets its share (random keys left long-c two of the
            // twelve of the scale-in once, where its four slots were awaited).
            sent.addAll(client.publishOnEveryPartition("long-stop", BATCH, PARTITIONS, LongCallsIT::request));
            fleet.awaitCallsInFlight(List.of("long-b"), CONCURRENCY, WITHIN);
            fleet.replica("long-b").stop();
            fleet.awaitAssignment(Set.of("long-a", "long-c"), WITHIN);
            client.awaitEnded(sent, WITHIN);

            // The scale-in goes on, down to one replica, again mid-call.
            sent.addAll(client.publishOnEveryPartition("long-scale-in", BATCH / 2, PARTITIONS, LongCallsIT::request));
            fleet.awaitCallsInFlight(List.of("long-c"), CONCURRENCY, WITHIN);
            fleet.replica("long-c").stop();
            fleet.awaitAssignment(Set.of("long-a"), WITHIN);
            client.awaitEnded(sent, WITHIN);

            await("every request committed").atMost(WITHIN).until(stack::allCommitted);
            Map<TopicPartition, Long> ends = stack.resultEnds();
            await("every event read").atMost(WITHIN).until(() -> client.caughtUpTo(ends));

            Map<String, Integer> events = Fleet.counts(client.eventsByRequest(sent));
            Map<String, Integer> calls = Fleet.counts(PipelineClient.byRequest(fleet.allCalls(), sent));
            Map<String, PipelineClient.Result> firsts = client.firstEvents(sent);
            long completed = firsts.values().stream()
                    .filter(PipelineClient.Result::completed)
                    .count();
            int extraCalls = Fleet.beyondOne(calls, id -> true);
            int repeats = Fleet.beyondOne(events, id -> true);
            System.out.printf(
                    "LongCallsIT: %d requests, calls of %d s, %d partitions, concurrency %d per replica; completed %d;"
                            + " join: requests with a call made that finished during the wait %d, given up %d, with no"
                            + " call made left to the new owner %d; extra calls %d, repeated events %d%n",
                    sent.size(),
                    CALL.toSeconds(),
                    PARTITIONS,
                    CONCURRENCY,
                    completed,
                    join.finished(),
                    join.givenUp(),
                    join.handedOver(),
                    extraCalls,
                    repeats);

            assertThat(firsts).as("requests answered").hasSize(sent.size());
            assertThat(completed).as("requests completed").isEqualTo(sent.size());
            // The join took partitions with calls in flight away from the replicas that had them, and waited for them.
            assertThat(join.finished())
                    .as("calls in flight waited for at the join")
                    .isPositive();
            assertThat(join.givenUp()).as("requests given up at the join").isZero();
            assertThat(extraCalls).as("extra gateway calls").isZero();
            assertThat(calls.keySet()).as("requests called").isEqualTo(sent);
            assertThat(repeats).as("repeated events, read_committed").isZero();
            fleet.replicas().forEach((name, replica) -> {
                assertThat(replica.starts()).as(name + " starts").isEqualTo(1);
                assertThat(Fleet.logLines(replica).stream()
                                .filter(line -> STUCK.matcher(line).find()))
                        .as(name + " reported no stuck record")
                        .isEmpty();
            });
            assertThat(fleet.replica("long-a").isLive())
                    .as("the replica left is live")
                    .isTrue();
            assertThat(fleet.replica("long-a").isReady())
                    .as("the replica left is ready")
                    .isTrue();
        }
    }

    private static String request(String id) {
        return PipelineClient.request(id, "a kite,");
    }

    private static final List<String> JVM_OPTIONS = List.of(
            "-Xmx256m",
            "-Dmp.messaging.incoming.requests.max.poll.records=4",
            // Stuck-record detection at the lengths of this test: longer than the request deadline plus the patience
            // (start-up requires it), far shorter than its default.
            "-Dmp.messaging.incoming.requests.throttled.unprocessed-record-max-age.ms=40000",
            // Shorter than a call: heartbeats come from their own thread, a call never counts against the session.
            "-Dmp.messaging.incoming.requests.session.timeout.ms=6000",
            "-Dmp.messaging.incoming.requests.heartbeat.interval.ms=1000");

    /**
     * A whole call (12 s) and the patience (4 s), from which the rebalance and shutdown graces are derived as the
     * chart leaves them; a results' transaction timeout shorter than a call (a transaction never spans one).
     */
    private static WorkerProcess.Builder scaledSettings(WorkerProcess.Builder worker) {
        return worker.env("IMAGE_WORKER_GATEWAY_TIMEOUT", "12s")
                .env("IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE", "4s")
                .env("IMAGE_WORKER_RETRY_REQUEST_DEADLINE", "30s")
                .env("IMAGE_WORKER_TRANSACTIONS_TIMEOUT", "3s");
    }
}
