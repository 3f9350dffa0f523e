package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.KafkaOffsets;
import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.Infrastructure;
import io.imageworker.testing.launch.Fleet;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.TakesAbout;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Parking across a rebalance, on the real broker with two packaged workers: a backlog of producer A far beyond the
 * request topic's partitions times their window (4 x 10 here), then B's requests; the workers park what lies beyond
 * the window, and what is past A's share, in the transactions of its offsets, and read it back in turns. Mid-backlog,
 * while records are being parked and read back, one worker leaves: its partitions of both topics move to the other.
 * Every request must still end in exactly one event for a {@code read_committed} reader: no record parked twice or
 * both parked and done, none done again by the new owner of a partition, none committed before its result.
 *
 * <p>Leaving by SIGTERM, the worker drains and commits what it finished: not one gateway call is made twice. Killed
 * (SIGKILL), it commits nothing more, so its last commits are what its partitions' next owner starts from: the worker
 * killed is the one reading A's parked partition, killed once its last commit there names records finished above the
 * committed offset (the window's metadata) and while calls of it are in flight. A call whose result it had not
 * committed is legitimately made again (at least once calls, exactly once results: docs/delivery-semantics.md), so the
 * calls made twice are bounded by the requests it had called for and not ended, never more.
 */
@TakesAbout(seconds = 153)
class ParkingRebalanceIT {

    private static final int PARTITIONS = 4;

    private static final int OF_A = 300;

    private static final int OF_B = 20;

    private static final int CONCURRENCY = 4;

    private static final Duration WITHIN = Duration.ofSeconds(120);

    private static final List<String> JVM_OPTIONS = List.of(
            "-Xmx256m",
            "-Dmp.messaging.incoming.requests.max.poll.records=8",
            "-Dmp.messaging.incoming.requests.session.timeout.ms=6000",
            "-Dmp.messaging.incoming.requests.heartbeat.interval.ms=1000");

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aWorkerLeavingMidBacklogLeavesEveryRequestOneEventAndOneCall() throws Exception {
        try (Backlog backlog = Backlog.start("park")) {
            backlog.awaitMidBacklog();

            backlog.fleet.replica("park-b").stop();
            backlog.awaitGroup(Set.of("park-a"));
            backlog.awaitAllEnded("park-a");

            Map<String, Integer> calls = backlog.calls();
            backlog.assertOneEventEach();
            assertThat(calls).as("requests called").hasSize(backlog.ids.size());
            assertThat(Fleet.beyondOne(calls, id -> true))
                    .as("extra gateway calls")
                    .isZero();
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aWorkerKilledMidBacklogLeavesEveryRequestOneEventAndRepeatsOnlyItsUnendedCalls() throws Exception {
        try (Backlog backlog = Backlog.start("kill")) {
            backlog.awaitMidBacklog();
            TopicPartition parkedOfA = backlog.parkedOfA();
            String victim = backlog.ownerOf(parkedOfA);
            String survivor = victim.equals("kill-a") ? "kill-b" : "kill-a";
            GatewaySimulator victimGateway = backlog.fleet.gateway(victim);
            // Its last commit of A's parked partition names records finished above it, records of that partition wait
            // to be read back, and calls of it are in flight: then it dies.
            await("records finished above the commit of " + parkedOfA + ", and calls in flight on " + victim)
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> victimGateway.imageCallsInFlight() > 0
                            && !finishedAbove(backlog.stack.committed().get(parkedOfA))
                                    .isEmpty());
            Instant killedAt = Instant.now();
            backlog.fleet.replica(victim).kill();
            // Nobody commits its partitions until its session expires: this is what their next owner starts from.
            OffsetAndMetadata lastCommit = backlog.stack.committed().get(parkedOfA);
            long parkedWaiting = KafkaOffsets.endOffsets(backlog.stack.kafka(), backlog.parked)
                            .get(parkedOfA)
                    - lastCommit.offset();

            backlog.awaitGroup(Set.of(survivor));
            await("the killed worker's calls seen to end")
                    .atMost(WITHIN)
                    .until(() -> victimGateway.imageCallsInFlight() == 0);
            backlog.awaitAllEnded(survivor);

            Map<String, PipelineClient.Result> firsts = backlog.client.firstEvents(backlog.ids);
            // The requests it had called for and not ended (a call in flight, or answered and its result not
            // committed): the only calls its death may make the survivor make again.
            long calledUnended = victimGateway.imageCalls().stream()
                    .map(call -> PipelineClient.requestOf(call, backlog.ids))
                    .filter(id -> id != null && !firsts.get(id).createdAt().isBefore(killedAt))
                    .distinct()
                    .count();
            Map<String, Integer> calls = backlog.calls();
            int extraCalls = Fleet.beyondOne(calls, id -> true);
            System.out.printf(
                    "ParkingRebalanceIT (kill): %s killed holding %s, its last commit there %s (%d record(s) of the"
                            + " partition above it); requests it had called for and not ended %d; extra calls %d%n",
                    victim, parkedOfA, lastCommit, parkedWaiting, calledUnended, extraCalls);

            backlog.assertOneEventEach();
            assertThat(calls).as("requests called").hasSize(backlog.ids.size());
            assertThat((long) extraCalls)
                    .as("extra gateway calls (at most the killed worker's called and not ended)")
                    .isLessThanOrEqualTo(calledUnended);
            assertThat(calledUnended)
                    .as("requests the killed worker had called for and not ended (at most its in progress)")
                    .isLessThanOrEqualTo(2L * CONCURRENCY);
        }
    }

    /** What a commit's metadata names as finished above its offset ({@code offsets.FinishedAbove}); empty: nothing. */
    private static String finishedAbove(OffsetAndMetadata commit) {
        return commit == null || commit.metadata() == null ? "" : commit.metadata();
    }

    /**
     * Two replicas on a stack of their own with a parked topic, a window of 10 offsets and {@code PARK_AFTER} 4, and
     * A's backlog then B's requests published.
     */
    private static final class Backlog implements AutoCloseable {
        private final LaunchStack stack;
        private final PipelineClient client;
        private final Fleet fleet;
        private final String parked;
        private final String prefix;
        private final Set<String> ids = new LinkedHashSet<>();

        private Backlog(LaunchStack stack, PipelineClient client, Fleet fleet, String parked, String prefix) {
            this.stack = stack;
            this.client = client;
            this.fleet = fleet;
            this.parked = parked;
            this.prefix = prefix;
        }

        /** Replicas {@code <prefix>-a} and {@code <prefix>-b} started, in the group, and the backlog published. */
        static Backlog start(String prefix) {
            SimulatorSettings settings = SimulatorSettings.defaults()
                    .withLatency(Latency.uniform(Duration.ofMillis(150), Duration.ofMillis(300)))
                    .withQuota(SimulatorSettings.UNLIMITED_QUOTA);
            String parked = "parked-" + UUID.randomUUID().toString().substring(0, 8);
            Infrastructure.get().kafka().createTopics(PARTITIONS, parked);
            LaunchStack stack = LaunchStack.onSharedServers(settings, PARTITIONS);
            Backlog backlog =
                    new Backlog(stack, PipelineClient.on(stack), new Fleet(stack, PARTITIONS), parked, prefix);
            for (String name : List.of(prefix + "-a", prefix + "-b")) {
                backlog.fleet.add(name, settings, CONCURRENCY, jvmOptions(name), worker -> worker.env(
                                "IMAGE_WORKER_TOPIC_REQUEST_PARKED", parked)
                        .env("IMAGE_WORKER_OFFSET_WINDOW", "10")
                        .env("IMAGE_WORKER_PARK_AFTER", "4")
                        .env("IMAGE_WORKER_SHUTDOWN_GRACE", "30s")
                        // A killed worker's open transaction holds its partitions' offsets for this long.
                        .env("IMAGE_WORKER_TRANSACTIONS_TIMEOUT", "3s"));
            }
            backlog.fleet.start(prefix + "-a", prefix + "-b");
            backlog.awaitGroup(Set.of(prefix + "-a", prefix + "-b"));
            backlog.ids.addAll(backlog.client
                    .publish("a", OF_A, id -> PipelineClient.request(id, "a kite,", "\"producer\":\"a\""))
                    .keySet());
            backlog.ids.addAll(backlog.client
                    .publish("b", OF_B, id -> PipelineClient.request(id, "a kite,", "\"producer\":\"b\""))
                    .keySet());
            return backlog;
        }

        /** Mid-backlog: both workers have parked records, a tenth of the events are out, and fewer than half. */
        void awaitMidBacklog() {
            await("both workers parking")
                    .atMost(WITHIN)
                    .until(() -> parkedBy(prefix + "-a") > 0 && parkedBy(prefix + "-b") > 0);
            await("a tenth of the events")
                    .atMost(WITHIN)
                    .until(() -> client.firstEvents(ids).size() >= ids.size() / 10);
            assertThat(client.firstEvents(ids).size())
                    .as("events when the worker leaves")
                    .isLessThan(ids.size() / 2);
        }

        /** The partition of the parked topic A's records were parked in: the one holding the most. */
        TopicPartition parkedOfA() {
            return KafkaOffsets.endOffsets(stack.kafka(), parked).entrySet().stream()
                    .max(Comparator.comparingLong(Map.Entry::getValue))
                    .orElseThrow()
                    .getKey();
        }

        /** The replica whose consumer of the parked topic holds {@code partition}. */
        String ownerOf(TopicPartition partition) {
            return fleet.assignment().entrySet().stream()
                    .filter(member -> member.getValue().contains(partition))
                    .map(member -> member.getKey().replaceFirst("-parked$", ""))
                    .findFirst()
                    .orElseThrow();
        }

        /**
         * Every request has an event, {@code survivor} has nothing left in progress or waiting, and every event
         * published so far has been read: an event published again would be among them.
         */
        void awaitAllEnded(String survivor) {
            client.awaitEnded(ids, WITHIN);
            await("nothing left to do on " + survivor)
                    .atMost(WITHIN)
                    .until(() -> fleet.replica(survivor)
                                            .metric("image_worker_requests_in_progress")
                                            .orElse(1)
                                    == 0
                            && fleet.replica(survivor)
                                            .metric("image_worker_requests_waiting_turn")
                                            .orElse(1)
                                    == 0
                            && stack.allCommitted());
            Map<TopicPartition, Long> ends = stack.resultEnds();
            await("every event read").atMost(WITHIN).until(() -> client.caughtUpTo(ends));
        }

        void assertOneEventEach() {
            Map<String, Integer> events = Fleet.counts(client.eventsByRequest(ids));
            assertThat(events).as("requests with an event").hasSize(ids.size());
            assertThat(Fleet.beyondOne(events, id -> true))
                    .as("repeated events, read_committed")
                    .isZero();
        }

        /** The gateway calls of each request, every replica's. */
        Map<String, Integer> calls() {
            return Fleet.counts(PipelineClient.byRequest(fleet.allCalls(), ids));
        }

        /**
         * Waits until exactly these replicas' two consumers each (the request topic's and the parked topic's) are in
         * the group, hold every partition of both topics between them, and each holds its even share. A newcomer is
         * in the group with nothing assigned while the cooperative protocol moves partitions to it: publishing then
         * let one replica park the whole backlog alone within a second or two, and the other never park at all.
         */
        void awaitGroup(Set<String> replicas) {
            Set<String> members = new HashSet<>();
            replicas.forEach(name -> {
                members.add(name);
                members.add(name + "-parked");
            });
            await("the group to settle on " + members)
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        Map<String, Set<TopicPartition>> assignment = fleet.assignment();
                        return assignment.keySet().equals(members)
                                && assignment.values().stream()
                                                .mapToInt(Set::size)
                                                .sum()
                                        == 2 * PARTITIONS
                                && assignment.values().stream()
                                        .allMatch(held -> held.size() >= PARTITIONS / replicas.size());
                    });
        }

        private double parkedBy(String name) {
            return fleet.replica(name)
                    .metric("image_worker_requests_parked_total")
                    .orElse(0);
        }

        @Override
        public void close() {
            try (LaunchStack closingStack = stack;
                    PipelineClient closingClient = client) {
                fleet.close();
            }
        }
    }

    /** The replica's JVM options: its parked topic's consumer named after it too, {@code <name>-parked}. */
    private static List<String> jvmOptions(String name) {
        List<String> options = new ArrayList<>(JVM_OPTIONS);
        options.add("-Dmp.messaging.incoming.parked-requests.client.id=" + name + "-parked");
        return options;
    }
}
