package io.imageworker.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.imageworker.config.ProducerWeights;
import io.imageworker.contract.Lane;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The estimate of a queued request: its position over this replica's recent rate times its producer's weighted share,
 * later for a later position, and none without a rate. Where producers are taken from their topics: its position over
 * its producer's own rate, or its guaranteed share of the slots, and no share of those waiting now.
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

    @Test
    void aProducersOwnEstimateIsItsPositionOverItsOwnRateWithNoShare() {
        RequestStatus.Queue queue = QueueEstimate.ofOwn(
                standing(6, "bulk", "bulk", "edits"), OptionalDouble.of(1.5), OptionalLong.of(20_000), 0.2, 4, NOW);

        assertThat(queue.callExpectedInSeconds()).isEqualTo(4.0);
        assertThat(queue.callExpectedAt()).isEqualTo(NOW.plusSeconds(4));
        assertThat(queue.callsPerSecond()).isEqualTo(1.5);
        assertThat(queue.basis()).isEqualTo(QueueEstimate.OWN_CALLS);
        assertThat(queue.share()).isNull();
    }

    @Test
    void withoutAnOwnRateItIsTheGuaranteedShareOfTheSlotsAtItsOwnCallLength() {
        // 0.2 of 4 slots, each held 10 s: 0.08 calls a second, 25 s for position 2.
        RequestStatus.Queue queue = QueueEstimate.ofOwn(
                standing(2, "bulk", "bulk"), OptionalDouble.empty(), OptionalLong.of(10_000), 0.2, 4, NOW);

        assertThat(queue.callsPerSecond()).isEqualTo(0.08);
        assertThat(queue.callExpectedInSeconds()).isEqualTo(25.0);
        assertThat(queue.basis()).isEqualTo(QueueEstimate.GUARANTEED_SHARE);
        assertThat(queue.share()).isNull();

        assertThat(QueueEstimate.ofOwn(standing(2, "bulk"), OptionalDouble.empty(), OptionalLong.empty(), 0.2, 4, NOW)
                        .noEstimate())
                .isEqualTo(QueueEstimate.NO_RECENT_CALLS);
        assertThat(QueueEstimate.ofOwn(standing(2, "bulk"), OptionalDouble.empty(), OptionalLong.of(10_000), 0, 4, NOW)
                        .noEstimate())
                .isEqualTo(QueueEstimate.PRIORITY_FIRST);
    }

    @Test
    void theGuaranteedShareIsTheWeightOverEveryProducerNamedAndTheLanesLeastPart() {
        Set<String> named = Set.of("bulk", "edits", "misc");

        // bulk 1, edits 4, misc 1: whoever waits now.
        assertThat(QueueEstimate.guaranteedShare("edits", Lane.NORMAL, WEIGHTS, named, false, 0.1))
                .isCloseTo(4 / 6.0, within(1e-12));
        assertThat(QueueEstimate.guaranteedShare("bulk", Lane.NORMAL, WEIGHTS, named, true, 0.25))
                .isCloseTo(0.25 / 6, within(1e-12));
        assertThat(QueueEstimate.guaranteedShare("bulk", Lane.PRIORITY, WEIGHTS, named, true, 0.25))
                .isCloseTo(0.75 / 6, within(1e-12));
        assertThat(QueueEstimate.guaranteedShare("bulk", Lane.NORMAL, WEIGHTS, named, true, 0))
                .isZero();
    }
}
