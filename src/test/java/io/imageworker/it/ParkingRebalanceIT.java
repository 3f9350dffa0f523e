package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.Infrastructure;
import io.imageworker.testing.launch.Fleet;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Parking across a rebalance, on the real broker with two packaged workers: a backlog of producer A far beyond the
 * request topic's partitions times their window (4 x 10 here), then B's requests; the workers park what lies beyond
 * the window, and what is past A's share, in the transactions of its offsets, and read it back in turns. Mid-backlog,
 * while records are being parked and read back, one worker leaves (SIGTERM): its partitions of both topics move to
 * the other. Every request must still end in exactly one event for a {@code read_committed} reader, after exactly one
 * gateway call: no record parked twice or both parked and done, none done again by the new owner of a partition.
 */
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
        SimulatorSettings settings = SimulatorSettings.defaults()
                .withLatency(Latency.uniform(Duration.ofMillis(150), Duration.ofMillis(300)))
                .withQuota(SimulatorSettings.UNLIMITED_QUOTA);
        String parked = "parked-" + UUID.randomUUID().toString().substring(0, 8);
        Infrastructure.get().kafka().createTopics(PARTITIONS, parked);
        try (LaunchStack stack = LaunchStack.onSharedServers(settings, PARTITIONS);
                PipelineClient client = PipelineClient.on(stack);
                Fleet fleet = new Fleet(stack, PARTITIONS)) {
            for (String name : List.of("park-a", "park-b")) {
                fleet.add(name, settings, CONCURRENCY, jvmOptions(name), worker -> worker.env(
                                "IMAGE_WORKER_TOPIC_REQUEST_PARKED", parked)
                        .env("IMAGE_WORKER_OFFSET_WINDOW", "10")
                        .env("IMAGE_WORKER_PARK_AFTER", "4")
                        .env("IMAGE_WORKER_SHUTDOWN_GRACE", "30s"));
            }
            fleet.start("park-a", "park-b");
            awaitGroup(fleet, Set.of("park-a", "park-b"));

            Set<String> ids = new LinkedHashSet<>(
                    client.publish("a", OF_A, id -> PipelineClient.request(id, "a kite,", "\"producer\":\"a\""))
                            .keySet());
            ids.addAll(client.publish("b", OF_B, id -> PipelineClient.request(id, "a kite,", "\"producer\":\"b\""))
                    .keySet());
            // Mid-backlog: both workers have parked records, and events have been published.
            await("both workers parking")
                    .atMost(WITHIN)
                    .until(() -> parked(fleet, "park-a") > 0 && parked(fleet, "park-b") > 0);
            await("a tenth of the events")
                    .atMost(WITHIN)
                    .until(() -> client.firstEvents(ids).size() >= ids.size() / 10);
            assertThat(client.firstEvents(ids).size())
                    .as("events when the worker leaves")
                    .isLessThan(ids.size() / 2);

            fleet.replica("park-b").stop();
            awaitGroup(fleet, Set.of("park-a"));
            client.awaitEnded(ids, WITHIN);

            Map<String, Integer> events = Fleet.counts(client.eventsByRequest(ids));
            Map<String, Integer> calls = Fleet.counts(PipelineClient.byRequest(fleet.allCalls(), ids));
            assertThat(events).as("requests with an event").hasSize(ids.size());
            assertThat(Fleet.beyondOne(events, id -> true))
                    .as("repeated events, read_committed")
                    .isZero();
            assertThat(calls).as("requests called").hasSize(ids.size());
            assertThat(Fleet.beyondOne(calls, id -> true))
                    .as("extra gateway calls")
                    .isZero();
        }
    }

    /** The replica's JVM options: its parked topic's consumer named after it too, {@code <name>-parked}. */
    private static List<String> jvmOptions(String name) {
        List<String> options = new ArrayList<>(JVM_OPTIONS);
        options.add("-Dmp.messaging.incoming.parked-requests.client.id=" + name + "-parked");
        return options;
    }

    /**
     * Waits until exactly these replicas' two consumers each (the request topic's and the parked topic's) are in the
     * group and hold every partition of both topics between them.
     */
    private static void awaitGroup(Fleet fleet, Set<String> replicas) {
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
                            && assignment.values().stream().mapToInt(Set::size).sum() == 2 * PARTITIONS;
                });
    }

    private static double parked(Fleet fleet, String name) {
        return fleet.replica(name).metric("image_worker_requests_parked_total").orElse(0);
    }
}
