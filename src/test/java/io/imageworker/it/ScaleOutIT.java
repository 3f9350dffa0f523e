package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.launch.Fleet;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.SharedServersFirst;
import io.imageworker.testing.launch.TakesAbout;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Replicas of the packaged worker joining and leaving one consumer group while requests flow, as an autoscaler
 * would make them: three replicas on a request topic of six partitions, a fourth joins, one leaves gracefully
 * (SIGTERM), one is killed (SIGKILL). Each replica calls a gateway simulator of its own, so that every call is
 * attributed to the replica that made it.
 *
 * <p>What it must cost: no request lost; with the cooperative-sticky assignor a join and a leave revoke nothing but the
 * partitions that move, and the requests in progress on those finish and commit before the new owner takes them, so
 * neither a join nor a graceful leave repeats a call or an event; a kill repeats at most the calls of the requests the
 * killed replica had called for and not ended (its calls in flight, and answers whose result it had not yet recorded)
 * and the events it had published since its last commit (at most its requests in progress). The figures, and the
 * throughput against Little's law, are printed for docs/delivery-semantics.md.
 */
@ExtendWith(SharedServersFirst.class)
@TakesAbout(seconds = 67)
class ScaleOutIT {

    private static final int PARTITIONS = 6;
    /**
     * Published at once: at 1.5 s a call and 24 calls in flight, some 30 s of work, to keep every replica busy through
     * the join and the graceful leave.
     */
    private static final int BACKLOG = 480;
    /**
     * Published just before the kill, so that the replica killed has calls in flight however long the join and the
     * leave took, even if the backlog is done: three times the calls in flight of the three replicas left, some 24 on
     * the killed replica's partitions (it holds two of the six once the leave is over), three rounds of its 8 calls. It was 240 (until
     * November 2026), which proved no more and made the two replicas left drain 20 s longer.
     */
    private static final int KILL_BACKLOG = 72;

    private static final int REQUESTS = BACKLOG + KILL_BACKLOG;
    /** Events seen before the newcomer is started, so that it joins while every replica is busy. */
    private static final int BEFORE_JOIN = 90;

    private static final int CONCURRENCY = 8;

    /** The replicas of the test running. */
    private Fleet fleet;

    private static final Duration MIN_LATENCY = Duration.ofSeconds(1);
    private static final Duration MAX_LATENCY = Duration.ofSeconds(2);
    private static final Duration WITHIN = Duration.ofSeconds(90);
    private static final Pattern REVOKED = Pattern.compile("Rebalance: (\\d+) partition\\(s\\) revoked");
    private static final Pattern ASSIGNED = Pattern.compile("Rebalance: (\\d+) partition\\(s\\) assigned");

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void replicasJoinLeaveAndDieWithoutLosingARequestOrRepeatingMoreThanTheKillForces() throws Exception {
        SimulatorSettings settings = SimulatorSettings.defaults()
                .withLatency(Latency.uniform(MIN_LATENCY, MAX_LATENCY))
                .withQuota(SimulatorSettings.UNLIMITED_QUOTA);
        try (LaunchStack stack = LaunchStack.onSharedServers(settings, PARTITIONS);
                PipelineClient client = PipelineClient.on(stack);
                Fleet fleet = new Fleet(stack, PARTITIONS)) {
            this.fleet = fleet;
            for (String name : List.of("scale-a", "scale-b", "scale-c", "scale-d")) {
                fleet.add(
                        name,
                        settings,
                        CONCURRENCY,
                        JVM_OPTIONS,
                        worker -> worker.env("IMAGE_WORKER_SHUTDOWN_GRACE", "30s"));
            }
            fleet.start("scale-a", "scale-b", "scale-c");
            fleet.awaitAssignment(Set.of("scale-a", "scale-b", "scale-c"), WITHIN);

            // The backlog, keyed by requestId: most at once, the rest just before the kill, so that the replica killed
            // has calls in flight however long the join and the leave took (a newcomer that needed 45 s to start on a
            // busy machine once found the whole backlog answered).
            Map<String, RecordMetadata> sent =
                    new LinkedHashMap<>(client.publish("scale", BACKLOG, id -> PipelineClient.request(id, "a kite,")));
            Instant start = Instant.now();
            Map<String, Instant> alive = new HashMap<>(Map.of("scale-a", start, "scale-b", start, "scale-c", start));
            Map<String, Instant> gone = new HashMap<>();

            // A replica joins while every replica is busy.
            awaitEvents(client, sent.keySet(), BEFORE_JOIN);
            Map<String, Integer> logMark = fleet.logMarks();
            fleet.replica("scale-d").start();
            alive.put("scale-d", Instant.now());
            fleet.awaitAssignment(Set.of("scale-a", "scale-b", "scale-c", "scale-d"), WITHIN);
            // The group shows the assignment before the newcomer's callback has read its committed offsets and
            // logged it: wait for its line.
            Map<String, Integer> joinMark = logMark;
            int newcomerPartitions = fleet.assignment().get("scale-d").size();
            await("the newcomer to log its assignment")
                    .atMost(WITHIN)
                    .until(() ->
                            rebalanceSince(joinMark, Set.of(), "scale-d").assignedToNewcomer() >= newcomerPartitions);
            Rebalance join = rebalanceSince(logMark, Set.of("scale-a", "scale-b", "scale-c"), "scale-d");

            // A replica leaves gracefully.
            logMark = fleet.logMarks();
            fleet.replica("scale-b").stop();
            gone.put("scale-b", Instant.now());
            fleet.awaitAssignment(Set.of("scale-a", "scale-c", "scale-d"), WITHIN);
            Rebalance leave = rebalanceSince(logMark, Set.of("scale-a", "scale-c", "scale-d"), null);

            // A replica is killed with calls in flight.
            GatewaySimulator killedGateway = fleet.gateway("scale-c");
            sent.putAll(client.publish("scale-late", KILL_BACKLOG, id -> PipelineClient.request(id, "a kite,")));
            fleet.awaitCallsInFlight(List.of("scale-c"), CONCURRENCY / 2, WITHIN);
            Set<TopicPartition> killedPartitions = fleet.assignment().get("scale-c");
            int inProgressAtKill = (int) fleet.replica("scale-c")
                    .metric("image_worker_requests_in_progress")
                    .orElseThrow();
            logMark = fleet.logMarks();
            Instant killedAt = Instant.now();
            fleet.replica("scale-c").kill();
            gone.put("scale-c", killedAt);
            // Its last commit: nobody commits its partitions until its session expires.
            Map<TopicPartition, OffsetAndMetadata> committedAtKill = stack.committed();
            await("the killed replica's calls seen to end")
                    .atMost(WITHIN)
                    .until(() -> killedGateway.imageCallsInFlight() == 0);
            long callsInFlightAtKill = killedGateway.imageCalls().stream()
                    .filter(call ->
                            call.finishedAt() == null || !call.finishedAt().isBefore(killedAt))
                    .count();
            fleet.awaitAssignment(Set.of("scale-a", "scale-d"), WITHIN);
            Rebalance kill = rebalanceSince(logMark, Set.of("scale-a", "scale-d"), null);

            // Everything answered and committed.
            await("a terminal event for every request")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> client.firstEvents(sent.keySet()).size() == REQUESTS);
            Instant end = client.firstEvents(sent.keySet()).values().stream()
                    .map(PipelineClient.Result::createdAt)
                    .max(Instant::compareTo)
                    .orElseThrow();
            await("every request committed").atMost(WITHIN).until(stack::allCommitted);
            Map<TopicPartition, Long> ends = stack.resultEnds();
            await("every event read").atMost(WITHIN).until(() -> client.caughtUpTo(ends));

            // The killed replica's events published after its last commit: delivered again, answered again.
            Map<String, PipelineClient.Result> firsts = client.firstEvents(sent.keySet());
            // The records the killed replica held uncommitted: the only ones the kill may make anyone do again.
            Set<String> uncommittedAtKill = sent.entrySet().stream()
                    .filter(entry -> {
                        TopicPartition partition = new TopicPartition(
                                entry.getValue().topic(), entry.getValue().partition());
                        OffsetAndMetadata committed = committedAtKill.get(partition);
                        return killedPartitions.contains(partition)
                                && (committed == null || entry.getValue().offset() >= committed.offset());
                    })
                    .map(Map.Entry::getKey)
                    .collect(Collectors.toSet());
            long publishedUncommittedAtKill = uncommittedAtKill.stream()
                    .filter(id -> firsts.get(id).createdAt().isBefore(killedAt))
                    .count();
            // Its requests that had reached the gateway and not ended: a call in flight, or one answered whose result
            // was not recorded yet. The new owner calls again for each. Every call its gateway saw counts, not only
            // those that arrived before killedAt: that instant is read just before the SIGKILL, and the replica may
            // still send a call while the signal is on its way (a busy machine widens that window).
            long calledUnfinishedAtKill = killedGateway.imageCalls().stream()
                    .map(call -> PipelineClient.requestOf(call, sent.keySet()))
                    .filter(id -> id != null && !firsts.get(id).createdAt().isBefore(killedAt))
                    .distinct()
                    .count();
            Map<String, Integer> events = Fleet.counts(client.eventsByRequest(sent.keySet()));
            Map<String, Integer> calls = Fleet.counts(PipelineClient.byRequest(fleet.allCalls(), sent.keySet()));
            int repeats = Fleet.beyondOne(events, id -> true);
            int extraCalls = Fleet.beyondOne(calls, id -> true);
            // What the join and the graceful leave cost: whatever is repeated outside the killed replica's records.
            int repeatsBeforeKill = Fleet.beyondOne(events, id -> !uncommittedAtKill.contains(id));
            int extraCallsBeforeKill = Fleet.beyondOne(calls, id -> !uncommittedAtKill.contains(id));
            long lost = REQUESTS - firsts.size();
            Figures figures = figures(start, end, alive, gone);

            System.out.printf(
                    "ScaleOutIT: %d requests, %d partitions, concurrency %d per replica, gateway %d-%d ms (mean %d ms"
                            + " measured); lost %d%n"
                            + "  join (scale-d): partitions revoked %d (assigned to the new replica %d); requests on them"
                            + " that finished within the grace %d, given up %d; records read ahead left to the"
                            + " new owner %d%n"
                            + "  graceful leave (scale-b): partitions revoked on the others %d; repeated events and"
                            + " extra calls of join and leave together %d, %d%n"
                            + "  kill (scale-c): partitions revoked on the others %d; calls in flight %d (requests"
                            + " called and not ended %d), requests in progress %d, events published since its last"
                            + " commit %d; repeated events %d, extra calls %d%n"
                            + "  wall %.1f s; Little's law: %.1f s with 3 replicas throughout, %.1f s for the replicas"
                            + " that were there (%.2f on average); throughput %.1f/s, mean calls in flight %.1f%n",
                    REQUESTS,
                    PARTITIONS,
                    CONCURRENCY,
                    MIN_LATENCY.toMillis(),
                    MAX_LATENCY.toMillis(),
                    figures.meanLatency().toMillis(),
                    lost,
                    join.revoked(),
                    join.assignedToNewcomer(),
                    join.finishedDuringWait(),
                    join.givenUp(),
                    join.handedOver(),
                    leave.revoked(),
                    repeatsBeforeKill,
                    extraCallsBeforeKill,
                    kill.revoked(),
                    callsInFlightAtKill,
                    calledUnfinishedAtKill,
                    inProgressAtKill,
                    publishedUncommittedAtKill,
                    repeats,
                    extraCalls,
                    figures.wallSeconds(),
                    figures.idealThreeSeconds(),
                    figures.idealPresentSeconds(),
                    figures.meanReplicas(),
                    REQUESTS / figures.wallSeconds(),
                    figures.meanCallsInFlight());

            assertThat(lost).as("requests lost").isZero();
            // Incremental: a join revokes only what moves to the newcomer; a leave or a death revokes nothing.
            assertThat(join.assignedToNewcomer()).isPositive();
            assertThat(join.revoked()).isEqualTo(join.assignedToNewcomer());
            assertThat(join.givenUp()).as("requests given up at the join").isZero();
            assertThat(leave.revoked()).isZero();
            assertThat(kill.revoked()).isZero();
            assertThat(repeatsBeforeKill)
                    .as("repeated events after a join and a graceful leave")
                    .isZero();
            assertThat(extraCallsBeforeKill)
                    .as("extra calls after a join and a graceful leave")
                    .isZero();
            assertThat(callsInFlightAtKill).as("the kill cut calls off").isPositive();
            assertThat((long) extraCalls).as("extra calls").isLessThanOrEqualTo(calledUnfinishedAtKill);
            assertThat((long) repeats).as("repeated events").isLessThanOrEqualTo(publishedUncommittedAtKill);
            assertThat(repeats).as("repeated events").isLessThanOrEqualTo(inProgressAtKill);
            // Results and offsets go out in one transaction: a read_committed reader sees no repeat, even of the kill.
            assertThat(repeats).as("repeated events, read_committed").isZero();
        }
    }

    private static final List<String> JVM_OPTIONS = List.of(
            "-Xmx256m",
            // Small polls mix the partitions among the requests in progress, so that a partition taken away has
            // requests in progress for the grace to wait for.
            "-Dmp.messaging.incoming.requests.max.poll.records=4",
            // A killed replica's partitions move after 6 s (the broker's minimum) instead of 15.
            "-Dmp.messaging.incoming.requests.session.timeout.ms=6000",
            "-Dmp.messaging.incoming.requests.heartbeat.interval.ms=1000");

    private static void awaitEvents(PipelineClient client, Set<String> ids, int count) {
        await("%d events".formatted(count))
                .atMost(WITHIN)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> client.firstEvents(ids).size() >= count);
    }

    /** What the replicas logged of a rebalance since the marks: partitions revoked on {@code others}, and assigned. */
    private Rebalance rebalanceSince(Map<String, Integer> marks, Set<String> others, String newcomer) {
        int revoked = 0;
        for (String name : others) {
            for (String line : fleet.linesSince(marks, name)) {
                Matcher matcher = REVOKED.matcher(line);
                if (matcher.find()) {
                    revoked += Integer.parseInt(matcher.group(1));
                }
            }
        }
        int assigned = 0;
        if (newcomer != null) {
            for (String line : fleet.linesSince(marks, newcomer)) {
                Matcher matcher = ASSIGNED.matcher(line);
                if (matcher.find()) {
                    assigned += Integer.parseInt(matcher.group(1));
                }
            }
        }
        Fleet.Released released = fleet.releasedSince(marks, others);
        return new Rebalance(revoked, assigned, released.finished(), released.givenUp(), released.handedOver());
    }

    /** Wall time, mean call latency, and what Little's law allows: throughput = calls in flight / latency. */
    private Figures figures(Instant start, Instant end, Map<String, Instant> alive, Map<String, Instant> gone) {
        List<RecordedCall> calls = fleet.allCalls();
        double callSeconds = calls.stream()
                .filter(call -> call.finishedAt() != null)
                .mapToDouble(call ->
                        Duration.between(call.arrivedAt(), call.finishedAt()).toNanos() / 1e9)
                .sum();
        long finished = calls.stream().filter(call -> call.finishedAt() != null).count();
        double latency = callSeconds / Math.max(1, finished);
        double wall = Duration.between(start, end).toNanos() / 1e9;
        double replicaSeconds = 0;
        for (Map.Entry<String, Instant> replica : alive.entrySet()) {
            Instant from = replica.getValue().isBefore(start) ? start : replica.getValue();
            Instant to = gone.getOrDefault(replica.getKey(), end);
            replicaSeconds += Math.max(
                    0, Duration.between(from, to.isAfter(end) ? end : to).toNanos() / 1e9);
        }
        double meanReplicas = replicaSeconds / wall;
        return new Figures(
                Duration.ofNanos((long) (latency * 1e9)),
                wall,
                REQUESTS * latency / (3.0 * CONCURRENCY),
                REQUESTS * latency / (meanReplicas * CONCURRENCY),
                meanReplicas,
                callSeconds / wall);
    }

    /**
     * What the replicas logged of one rebalance.
     *
     * @param revoked partitions revoked from the replicas that stay
     * @param assignedToNewcomer partitions given to the replica that joined
     * @param finishedDuringWait requests on the revoked partitions that finished within the rebalance grace
     * @param givenUp requests on them that did not
     * @param handedOver records on them read ahead and still waiting for their turn: left to the new owner, nothing
     *     done for them
     */
    private record Rebalance(
            int revoked, int assignedToNewcomer, int finishedDuringWait, int givenUp, int handedOver) {}

    private record Figures(
            Duration meanLatency,
            double wallSeconds,
            double idealThreeSeconds,
            double idealPresentSeconds,
            double meanReplicas,
            double meanCallsInFlight) {}
}
