package io.imageworker.testing.launch;

import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.TopicPartition;

/**
 * Replicas of the packaged worker in one consumer group on a {@link LaunchStack}, as an autoscaler runs them, each
 * calling a gateway simulator of its own so that every call is counted where it was made: what the scale-out tests
 * and the rebalance benchmark start, watch and count. Replicas are named by their Kafka client id, so that the group's
 * assignment names them too.
 */
public final class Fleet implements AutoCloseable {

    /** The line a replica logs when a rebalance took partitions from it ({@code offsets.RevocationGrace}). */
    private static final Pattern RELEASED = Pattern.compile(
            "Rebalance: released .*; (\\d+) request\\(s\\) finished during the wait, (\\d+) given up, (\\d+)"
                    + " with no call made left to the new owner");

    private final LaunchStack stack;
    private final int partitions;
    private final Map<String, GatewaySimulator> gateways = new LinkedHashMap<>();
    private final Map<String, WorkerProcess> replicas = new LinkedHashMap<>();

    /** A fleet on {@code stack}, whose request topic has {@code partitions} partitions. */
    public Fleet(LaunchStack stack, int partitions) {
        this.stack = stack;
        this.partitions = partitions;
    }

    /**
     * Prepares replica {@code name} (not started): a gateway simulator of its own with {@code settings}, the stack's
     * environment with that gateway, {@code concurrency}, and its name as its Kafka client id; {@code customize} adds
     * the caller's settings (its JVM options replace the stack's).
     */
    public WorkerProcess add(
            String name,
            SimulatorSettings settings,
            int concurrency,
            List<String> jvmOptions,
            UnaryOperator<WorkerProcess.Builder> customize) {
        GatewaySimulator gateway = GatewaySimulator.start(settings);
        gateways.put(name, gateway);
        List<String> options = new ArrayList<>(jvmOptions);
        options.add("-Dmp.messaging.incoming.requests.client.id=" + name);
        WorkerProcess replica = customize
                .apply(stack.worker(name, concurrency)
                        .env("IMAGE_WORKER_GATEWAY_BASE_URL", gateway.baseUrl())
                        .env("IMAGE_WORKER_GATEWAY_API_KEY", gateway.validApiKey())
                        .jvmOptions(options))
                .build();
        replicas.put(name, replica);
        return replica;
    }

    /** Replica {@code name}. */
    public WorkerProcess replica(String name) {
        return replicas.get(name);
    }

    /** The replicas by name, in the order they were added. */
    public Map<String, WorkerProcess> replicas() {
        return replicas;
    }

    /** The gateway of replica {@code name}: only that replica calls it. */
    public GatewaySimulator gateway(String name) {
        return gateways.get(name);
    }

    /** Starts these replicas at once. */
    public void start(String... names) {
        WorkerProcess.together(List.of(names).stream().map(replicas::get).toList(), WorkerProcess::start);
    }

    /** Which partitions each member of the group holds now, by client id. */
    public Map<String, Set<TopicPartition>> assignment() {
        return stack.kafka().consumerGroups().describe(stack.topics().consumerGroup()).members().stream()
                .collect(Collectors.toMap(
                        MemberDescription::clientId,
                        member -> member.assignment().topicPartitions(),
                        (first, second) -> first));
    }

    /** Waits until exactly these replicas are in the group and hold every partition between them. */
    public void awaitAssignment(Set<String> members, Duration within) {
        await("the group to settle on " + members)
                .atMost(within)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    Map<String, Set<TopicPartition>> assignment = assignment();
                    return assignment.keySet().equals(members)
                            && assignment.values().stream().mapToInt(Set::size).sum() == partitions
                            && assignment.values().stream().noneMatch(Set::isEmpty);
                });
    }

    /** Calls in flight now at the gateways of these replicas. */
    public long callsInFlight(Collection<String> names) {
        return names.stream()
                .mapToLong(name -> gateways.get(name).imageCallsInFlight())
                .sum();
    }

    /** Waits until the gateways of these replicas have at least {@code count} calls in flight between them. */
    public void awaitCallsInFlight(Collection<String> names, long count, Duration within) {
        await("%d calls in flight on %s".formatted(count, names))
                .atMost(within)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> callsInFlight(names) >= count);
    }

    /** The image calls every replica's gateway received. */
    public List<RecordedCall> allCalls() {
        List<RecordedCall> calls = new ArrayList<>();
        gateways.values().forEach(gateway -> calls.addAll(gateway.imageCalls()));
        return calls;
    }

    /** How many lines each replica has logged so far: where {@link #releasedSince} starts reading. */
    public Map<String, Integer> logMarks() {
        Map<String, Integer> marks = new HashMap<>();
        replicas.forEach((name, replica) -> marks.put(name, logLines(replica).size()));
        return marks;
    }

    /** The lines {@code replica} logged, in every life. */
    public static List<String> logLines(WorkerProcess replica) {
        try {
            return Files.exists(replica.logFile())
                    ? Files.readAllLines(replica.logFile(), StandardCharsets.UTF_8)
                    : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The lines {@code name} logged since {@code marks} ({@link #logMarks}). */
    public List<String> linesSince(Map<String, Integer> marks, String name) {
        List<String> lines = logLines(replicas.get(name));
        return lines.subList(Math.min(marks.getOrDefault(name, 0), lines.size()), lines.size());
    }

    /** What {@code names} logged of the partitions rebalances took from them since {@code marks}. */
    public Released releasedSince(Map<String, Integer> marks, Collection<String> names) {
        int finished = 0;
        int givenUp = 0;
        int handedOver = 0;
        for (String name : names) {
            for (String line : linesSince(marks, name)) {
                Matcher released = RELEASED.matcher(line);
                if (released.find()) {
                    finished += Integer.parseInt(released.group(1));
                    givenUp += Integer.parseInt(released.group(2));
                    handedOver += Integer.parseInt(released.group(3));
                }
            }
        }
        return new Released(finished, givenUp, handedOver);
    }

    /**
     * What replicas logged of the partitions rebalances took from them.
     *
     * @param finished requests on them that finished during the wait
     * @param givenUp requests still running when the grace ended: the new owner may call again for them
     * @param handedOver records on them with no gateway call made (read ahead, or waiting for their first call): left
     *     to the new owner, which makes the call once
     */
    public record Released(int finished, int givenUp, int handedOver) {}

    /** How many items (events, calls) each request has. */
    public static Map<String, Integer> counts(Map<String, ? extends List<?>> byRequest) {
        Map<String, Integer> counts = new HashMap<>();
        byRequest.forEach((id, items) -> counts.put(id, items.size()));
        return counts;
    }

    /** How many beyond one, summed over the requests {@code counted} accepts: the repeats. */
    public static int beyondOne(Map<String, Integer> counts, Predicate<String> counted) {
        return counts.entrySet().stream()
                .filter(entry -> counted.test(entry.getKey()))
                .mapToInt(entry -> entry.getValue() - 1)
                .sum();
    }

    /** Closes every replica (at once), then every gateway. */
    @Override
    public void close() {
        try {
            WorkerProcess.together(replicas.values(), WorkerProcess::close);
        } finally {
            gateways.values().forEach(GatewaySimulator::close);
        }
    }
}
