package io.imageworker.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.config.ProducerWeights;
import io.imageworker.contract.Lane;
import io.imageworker.processing.ProducerLines;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

/**
 * The estimate of a queued request: its position over this replica's recent rate times its producer's weighted share,
 * later for a later position, and none without a rate.
 */
class QueueEstimateTest {

    private static final Instant NOW = Instant.parse("2026-11-27T12:00:00Z");

    private static final ProducerWeights WEIGHTS = ProducerWeights.parse("bulk=1,edits=4");

    private static ProducerLines.Standing standing(long position, String producer, String... inLane) {
        return new ProducerLines.Standing(position, Lane.NORMAL, producer, List.of(inLane), false);
    }

    @Test
    void aProducerAloneGetsEveryCall() {
        RequestStatus.Queue queue =
                QueueEstimate.of(standing(8, "bulk", "bulk"), OptionalDouble.of(4.0), WEIGHTS, 0.1, NOW);

        assertThat(queue.position()).isEqualTo(8);
        assertThat(queue.share()).isEqualTo(1.0);
        assertThat(queue.callsPerSecond()).isEqualTo(4.0);
        assertThat(queue.callExpectedInSeconds()).isEqualTo(2.0);
        assertThat(queue.callExpectedAt()).isEqualTo(NOW.plusSeconds(2));
        assertThat(queue.noEstimate()).isNull();
    }

    @Test
    void aProducerGetsItsWeightsShareOfTheProducersWaiting() {
        RequestStatus.Queue bulk =
                QueueEstimate.of(standing(2, "bulk", "bulk", "edits"), OptionalDouble.of(10.0), WEIGHTS, 0.1, NOW);
        RequestStatus.Queue edits =
                QueueEstimate.of(standing(2, "edits", "bulk", "edits"), OptionalDouble.of(10.0), WEIGHTS, 0.1, NOW);

        // bulk gets 1 call in 5: 2 / (10 x 0.2) = 1 s; edits 4 in 5: 2 / (10 x 0.8) = 0.25 s.
        assertThat(bulk.share()).isEqualTo(0.2);
        assertThat(bulk.callExpectedInSeconds()).isEqualTo(1.0);
        assertThat(edits.share()).isEqualTo(0.8);
        assertThat(edits.callExpectedAt()).isEqualTo(NOW.plus(Duration.ofMillis(250)));
    }

    @Test
    void aLaterPositionHasALaterEstimate() {
        Instant previous = NOW;
        for (long position = 1; position <= 50; position++) {
            RequestStatus.Queue queue =
                    QueueEstimate.of(standing(position, "a", "a", "b", "c"), OptionalDouble.of(3.3), WEIGHTS, 0.1, NOW);
            assertThat(queue.callExpectedAt()).as("position %d", position).isAfter(previous);
            previous = queue.callExpectedAt();
        }
    }

    @Test
    void whileThePriorityLaneWaitsTooTheNormalLaneGetsItsLeastShare() {
        ProducerLines.Standing normal = new ProducerLines.Standing(1, Lane.NORMAL, "a", List.of("a"), true);
        ProducerLines.Standing priority = new ProducerLines.Standing(1, Lane.PRIORITY, "a", List.of("a", "b"), true);

        assertThat(QueueEstimate.share(normal, WEIGHTS, 0.25)).isEqualTo(0.25);
        assertThat(QueueEstimate.share(priority, WEIGHTS, 0.25)).isEqualTo(0.375);
        assertThat(QueueEstimate.of(normal, OptionalDouble.of(5), WEIGHTS, 0, NOW)
                        .noEstimate())
                .isEqualTo(QueueEstimate.PRIORITY_FIRST);
    }

    @Test
    void withoutARateThereIsAPositionAndNoEstimate() {
        RequestStatus.Queue queue =
                QueueEstimate.of(standing(3, "bulk", "bulk"), OptionalDouble.empty(), WEIGHTS, 0.1, NOW);

        assertThat(queue.position()).isEqualTo(3);
        assertThat(queue.callExpectedAt()).isNull();
        assertThat(queue.callExpectedInSeconds()).isNull();
        assertThat(queue.callsPerSecond()).isNull();
        assertThat(queue.noEstimate()).isEqualTo(QueueEstimate.NO_RECENT_CALLS);
    }
}
