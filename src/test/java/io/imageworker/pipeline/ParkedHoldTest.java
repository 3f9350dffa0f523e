package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.infra.Infrastructure;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A producer's parked backlog read back does not stand before another producer's parked records ({@code
 * messaging.parking.ParkedHolds}), on the real broker. A's backlog lies beyond the request topic's windows and is
 * parked; B's requests, published while A's parked records are read back, find A's records waiting for their turns
 * and, past the first {@code IMAGE_WORKER_PARK_AFTER} of them, are parked too, in a partition of the parked topic of
 * their own.
 * Without the hold, the parked stream took the records read back first (A's) into a fixed number of places, each held
 * until its request ended, and the connector's queue and fetch buffer held more of A's behind them: B's parked records
 * came in only after about 70 of A's calls here (11 with the hold; one run each), and seven call lengths late in the
 * 50,000-request benchmark. Held at its share, A's parked partition stays in Kafka, and B's parked records come in
 * with their partition's next fetch, then take turns with A's.
 *
 * <p>Counted in calls, not seconds: how many of A's calls the gateway received between B's publication and B's last
 * first call. B weighs four times A: its 32 requests take about 8 of A's calls beside them, and a few rounds more
 * pass while B's are parked and read back. Without the hold, the 16 places of the parked stream ({@code park-after})
 * and the connector's queue of 20 records were A's before B's were fetched.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(ParkedHoldTest.WithParking.class)
class ParkedHoldTest extends PipelineTestSupport {

    static final String TOPIC = "image-request-parked-hold";

    static final String PARKED = "image-request-parked-hold-parked";

    /** More than the lane's places (8 in progress and 150 read ahead) and the topic's windows (4 x 10) together. */
    static final int BACKLOG = 300;

    /** B's requests: its first {@code park-after} (16) go to the lane, the others are parked behind A's. */
    static final int OF_B = 32;

    /** At most this many of A's calls between B's publication and B's last first call (about 70 without the hold). */
    static final int A_CALLS_AT_MOST = 32;

    /**
     * A request topic, a parked topic and a consumer group of their own; a window of 10, a read-ahead of 150, B
     * weighing four times A.
     */
    public static class WithParking extends WorkerTestResource {
        @Override
        public Map<String, String> start() {
            Map<String, String> config = new HashMap<>(super.start());
            Infrastructure.get().kafka().createTopics(PARKED);
            ownLanes(config, "parked-hold", TOPIC);
            config.put("image-worker.topic.request-parked", PARKED);
            config.put("image-worker.offset-window", "10");
            config.put("image-worker.park-after", "16");
            config.put("image-worker.producer-weights", "b=4");
            config.put("image-worker.read-ahead", "150");
            return config;
        }
    }

    @Inject
    MeterRegistry registry;

    @Test
    void aProducersParkedRecordsAreNotReadBackBehindAnotherProducersParkedBacklog() {
        awaitConsumerOf(TOPIC);
        gateway.control().setLatency(Duration.ofSeconds(1));
        List<String> ofA = sendKeyed(TOPIC, BACKLOG, "a");
        // A's backlog parked and read back (its first requests, taken before, still run and hold the windows, so
        // B's records lie beyond them and are parked too).
        await().atMost(WITHIN).until(() -> parked() >= BACKLOG - 60 && aCalls(ofA) >= 8);
        Instant published = Instant.now();
        List<String> ofB = sendKeyed(TOPIC, OF_B, "b");

        ofB.forEach(PipelineTestSupport::result);
        Instant lastOfB =
                firstCallArrivals(ofB).stream().max(Instant::compareTo).orElseThrow();
        long aBefore = gateway.imageCalls().stream()
                .filter(call -> !call.arrivedAt().isBefore(published)
                        && call.arrivedAt().isBefore(lastOfB))
                .filter(call -> ofA.stream()
                        .anyMatch(id ->
                                String.valueOf(call.textFields().get("prompt")).contains(id)))
                .count();
        assertThat(aBefore)
                .as("calls of A's backlog between B's publication and B's last first call")
                .isLessThanOrEqualTo(A_CALLS_AT_MOST);
        for (String id : ofB) {
            assertThat(kafka.results(id)).as("results of %s", id).hasSize(1);
            assertThat(callsFor(id)).as("gateway calls of %s", id).hasSize(1);
        }
    }

    private long aCalls(List<String> ofA) {
        return ofA.stream().mapToLong(id -> callsFor(id).size()).sum();
    }

    private double parked() {
        return registry.find("image_worker_requests_parked").counters().stream()
                .mapToDouble(counter -> counter.count())
                .sum();
    }
}
