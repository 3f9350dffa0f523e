package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.WorkerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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
 * throughput against Little's law, are printed for the README.
 */
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
    private static final Duration MIN_LATENCY = Duration.ofSeconds(1);
    private static final Duration MAX_LATENCY = Duration.ofSeconds(2);
    private static final Duration WITHIN = Duration.ofSeconds(90);
    private static final Pattern REVOKED = Pattern.compile("Rebalance: (\\d+) partition\\(s\\) revoked");
    private static final Pattern ASSIGNED = Pattern.compile("Rebalance: (\\d+) partition\\(s\\) assigned");
    private static final Pattern RELEASED = Pattern.compile(
            "Rebalance: released .*; (\\d+) request\\(s\\) finished during the wait, (\\d+) given up, (\\d+)"
                    + " waiting for their turn left to the new owner");

    private final Map<String, GatewaySimulator> gateways = new LinkedHashMap<>();
    private final Map<String, WorkerProcess> replicas = new LinkedHashMap<>();

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void replicasJoinLeaveAndDieWithoutLosingARequestOrRepeatingMoreThanTheKillForces() throws Exception {
        SimulatorSettings settings = SimulatorSettings.defaults()
                .withLatency(Latency.uniform(MIN_LATENCY, MAX_LATENCY))
                .withQuota(SimulatorSettings.UNLIMITED_QUOTA);
        try (LaunchStack stack = LaunchStack.onSharedServers(settings, PARTITIONS);
                PipelineClient client = PipelineClient.on(stack)) {
            for (String name : List.of("scale-a", "scale-b", "scale-c", "scale-d")) {
                replica(stack, settings, name);
            }
            startTogether("scale-a", "scale-b", "scale-c");
            awaitAssignment(stack, Set.of("scale-a", "scale-b", "scale-c"));

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
            Map<String, Integer> logMark = logMarks();
            replicas.get("scale-d").start();
            alive.put("scale-d", Instant.now());
            awaitAssignment(stack, Set.of("scale-a", "scale-b", "scale-c", "scale-d"));
            // The group shows the assignment before the newcomer's callback has read its committed offsets and
            // logged it: wait for its line.
            Map<String, Integer> joinMark = logMark;
            int newcomerPartitions = assignment(stack).get("scale-d").size();
            await("the newcomer to log its assignment")
                    .atMost(WITHIN)
                    .until(() ->
                            rebalanceSince(joinMark, Set.of(), "scale-d").assignedToNewcomer() >= newcomerPartitions);
            Rebalance join = rebalanceSince(logMark, Set.of("scale-a", "scale-b", "scale-c"), "scale-d");

            // A replica leaves gracefully.
            logMark = logMarks();
            replicas.get("scale-b").stop();
            gone.put("scale-b", Instant.now());
            awaitAssignment(stack, Set.of("scale-a", "scale-c", "scale-d"));
            Rebalance leave = rebalanceSince(logMark, Set.of("scale-a", "scale-c", "scale-d"), null);

            // A replica is killed with calls in flight.
            GatewaySimulator killedGateway = gateways.get("scale-c");
            sent.putAll(client.publish("scale-late", KILL_BACKLOG, id -> PipelineClient.request(id, "a kite,")));
            await("the replica to kill busy")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> killedGateway.imageCallsInFlight() >= CONCURRENCY / 2);
            Set<TopicPartition> killedPartitions = assignment(stack).get("scale-c");
            int inProgressAtKill = (int) replicas.get("scale-c")
                    .metric("image_worker_requests_in_progress")
                    .orElseThrow();
            logMark = logMarks();
            Instant killedAt = Instant.now();
            replicas.get("scale-c").kill();
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
            awaitAssignment(stack, Set.of("scale-a", "scale-d"));
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
            Map<String, Integer> events = perRequest(client.eventsByRequest(sent.keySet()));
            Map<String, Integer> calls = perRequest(PipelineClient.byRequest(allCalls(), sent.keySet()));
            int repeats = beyondOne(events, id -> true);
            int extraCalls = beyondOne(calls, id -> true);
            // What the join and the graceful leave cost: whatever is repeated outside the killed replica's records.
            int repeatsBeforeKill = beyondOne(events, id -> !uncommittedAtKill.contains(id));
            int extraCallsBeforeKill = beyondOne(calls, id -> !uncommittedAtKill.contains(id));
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
        } finally {
            try {
                WorkerProcess.together(replicas.values(), WorkerProcess::close);
            } finally {
                gateways.values().forEach(GatewaySimulator::close);
            }
        }
    }

    private void replica(LaunchStack stack, SimulatorSettings settings, String name) {
        GatewaySimulator gateway = GatewaySimulator.start(settings);
        gateways.put(name, gateway);
        replicas.put(
                name,
                stack.worker(name, CONCURRENCY)
                        .env("IMAGE_WORKER_GATEWAY_BASE_URL", gateway.baseUrl())
                        .env("IMAGE_WORKER_GATEWAY_API_KEY", gateway.validApiKey())
                        .env("IMAGE_WORKER_SHUTDOWN_GRACE", "30s")
                        .jvmOptions(List.of(
                                "-Xmx256m",
                                "-Dmp.messaging.incoming.requests.client.id=" + name,
                                // Small polls mix the partitions among the requests in progress, so that a
                                // partition taken away has requests in progress for the grace to wait for.
                                "-Dmp.messaging.incoming.requests.max.poll.records=4",
                                // A killed replica's partitions move after 6 s (the broker's minimum) instead of 15.
                                "-Dmp.messaging.incoming.requests.session.timeout.ms=6000",
                                "-Dmp.messaging.incoming.requests.heartbeat.interval.ms=1000"))
                        .build());
    }

    private void startTogether(String... names) {
        WorkerProcess.together(Stream.of(names).map(replicas::get).toList(), WorkerProcess::start);
    }

    /** Waits until exactly these replicas are in the group and hold every partition between them. */
    private static void awaitAssignment(LaunchStack stack, Set<String> members) {
        await("the group to settle on " + members)
                .atMost(WITHIN)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    Map<String, Set<TopicPartition>> assignment = assignment(stack);
                    return assignment.keySet().equals(members)
                            && assignment.values().stream().mapToInt(Set::size).sum() == PARTITIONS
                            && assignment.values().stream().noneMatch(Set::isEmpty);
                });
    }

    private static Map<String, Set<TopicPartition>> assignment(LaunchStack stack) {
        return stack.kafka().consumerGroups().describe(stack.topics().consumerGroup()).members().stream()
                .collect(Collectors.toMap(
                        MemberDescription::clientId,
                        member -> member.assignment().topicPartitions(),
                        (first, second) -> first));
    }

    private static void awaitEvents(PipelineClient client, Set<String> ids, int count) {
        await("%d events".formatted(count))
                .atMost(WITHIN)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> client.firstEvents(ids).size() >= count);
    }

    /** How many of each request's items (events, calls) there are. */
    private static Map<String, Integer> perRequest(Map<String, ? extends List<?>> byRequest) {
        Map<String, Integer> counts = new HashMap<>();
        byRequest.forEach((id, items) -> counts.put(id, items.size()));
        return counts;
    }

    /** The image calls of every replica's gateway. */
    private List<RecordedCall> allCalls() {
        List<RecordedCall> calls = new ArrayList<>();
        gateways.values().forEach(gateway -> calls.addAll(gateway.imageCalls()));
        return calls;
    }

    /** How many beyond one, summed over the requests {@code counted} accepts. */
    private static int beyondOne(Map<String, Integer> perRequest, java.util.function.Predicate<String> counted) {
        return perRequest.entrySet().stream()
                .filter(entry -> counted.test(entry.getKey()))
                .mapToInt(entry -> entry.getValue() - 1)
                .sum();
    }

    private Map<String, Integer> logMarks() throws IOException {
        Map<String, Integer> marks = new HashMap<>();
        for (Map.Entry<String, WorkerProcess> replica : replicas.entrySet()) {
            marks.put(replica.getKey(), logLines(replica.getValue()).size());
        }
        return marks;
    }

    private static List<String> logLines(WorkerProcess replica) throws IOException {
        return Files.exists(replica.logFile())
                ? Files.readAllLines(replica.logFile(), StandardCharsets.UTF_8)
                : List.of();
    }

    /** What the replicas logged of a rebalance since the marks: partitions revoked on {@code others}, and assigned. */
    private Rebalance rebalanceSince(Map<String, Integer> marks, Set<String> others, String newcomer)
            throws IOException {
        int revoked = 0;
        int assigned = 0;
        int finished = 0;
        int givenUp = 0;
        int handedOver = 0;
        for (String name : others) {
            List<String> lines = logLines(replicas.get(name));
            for (String line : lines.subList(Math.min(marks.get(name), lines.size()), lines.size())) {
                Matcher matcher = REVOKED.matcher(line);
                if (matcher.find()) {
                    revoked += Integer.parseInt(matcher.group(1));
                }
                Matcher released = RELEASED.matcher(line);
                if (released.find()) {
                    finished += Integer.parseInt(released.group(1));
                    givenUp += Integer.parseInt(released.group(2));
                    handedOver += Integer.parseInt(released.group(3));
                }
            }
        }
        if (newcomer != null) {
            List<String> lines = logLines(replicas.get(newcomer));
            for (String line : lines.subList(Math.min(marks.get(newcomer), lines.size()), lines.size())) {
                Matcher matcher = ASSIGNED.matcher(line);
                if (matcher.find()) {
                    assigned += Integer.parseInt(matcher.group(1));
                }
            }
        }
        return new Rebalance(revoked, assigned, finished, givenUp, handedOver);
    }

    /** Wall time, mean call latency, and what Little's law allows: throughput = calls in flight / latency. */
    private Figures figures(Instant start, Instant end, Map<String, Instant> alive, Map<String, Instant> gone) {
        List<RecordedCall> calls = allCalls();
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
