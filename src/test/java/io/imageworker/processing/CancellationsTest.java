package io.imageworker.processing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.imageworker.contract.Billing;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Pauses;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The cancels a worker remembers, on a clock the test moves: kept for the retention from their time, then forgotten. */
class CancellationsTest {

    private static final Duration RETENTION = Duration.ofHours(1);

    private final MovingClock clock = new MovingClock(Instant.parse("2026-01-05T10:00:00Z"));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    /** Room for three cancels of one producer, ids of three characters. */
    private static final long BOUND = 3 * Cancellations.bytesOf("r-1") + Cancellations.bytesOfProducer("default");

    private final RequestsInProgress progress = new RequestsInProgress(new Pauses(System::nanoTime));
    private final Cancellations cancellations = new Cancellations(clock, RETENTION, BOUND, true, registry, progress);

    @Test
    void aCancelIsRememberedForTheRetentionFromItsRecordsTimeThenForgotten() {
        cancellations.cancel("r-1", clock.millis());
        clock.advance(Duration.ofMinutes(59));

        assertThat(cancellations.isCancelled("r-1")).isTrue();
        assertThat(cancellations.isCancelled("r-2")).isFalse();
        assertThat(cancellations.held()).isEqualTo(1);

        clock.advance(Duration.ofMinutes(1));

        assertThat(cancellations.isCancelled("r-1")).isFalse();
        assertThat(cancellations.held()).isZero();
    }

    @Test
    void aCancelOlderThanTheRetentionIsIgnoredAndAYoungerOneCounts() {
        cancellations.cancel("old", clock.millis() - RETENTION.toMillis());
        cancellations.cancel(
                "recent", clock.millis() - RETENTION.minusMinutes(5).toMillis());

        assertThat(cancellations.isCancelled("old")).isFalse();
        assertThat(cancellations.isCancelled("recent")).isTrue();
        clock.advance(Duration.ofMinutes(5));
        assertThat(cancellations.isCancelled("recent")).isFalse();
    }

    @Test
    void aRepeatedCancelExtendsItsExpiryAndItsOldExpiryForgetsNothing() {
        cancellations.cancel("r-1", clock.millis());
        clock.advance(Duration.ofMinutes(30));
        cancellations.cancel("r-1", clock.millis());
        clock.advance(Duration.ofMinutes(40));

        assertThat(cancellations.isCancelled("r-1")).isTrue();
        assertThat(cancellations.held()).isEqualTo(1);
        clock.advance(Duration.ofMinutes(20));
        assertThat(cancellations.isCancelled("r-1")).isFalse();
    }

    @Test
    void beyondTheBoundTheCancelsNearestToTheirExpiryAreForgottenFirst() {
        for (int i = 1; i <= 5; i++) {
            cancellations.cancel("r-" + i, clock.millis());
            clock.advance(Duration.ofMinutes(1));
        }

        assertThat(cancellations.held()).isEqualTo(3);
        assertThat(cancellations.isCancelled("r-1")).isFalse();
        assertThat(cancellations.isCancelled("r-2")).isFalse();
        assertThat(cancellations.isCancelled("r-3")).isTrue();
        assertThat(cancellations.isCancelled("r-5")).isTrue();
    }

    @Test
    void aCancelStampedAheadCountsFromNowAndIsForgottenBeforeALaterOneAtTheBound() {
        cancellations.cancel("a-1", clock.millis() + Duration.ofMinutes(50).toMillis());
        clock.advance(Duration.ofMinutes(1));
        cancellations.cancel("r-2", clock.millis());
        clock.advance(Duration.ofMinutes(1));
        cancellations.cancel("r-3", clock.millis());
        cancellations.cancel("r-4", clock.millis());

        assertThat(cancellations.isCancelled("a-1"))
                .as("the oldest by its arrival, forgotten")
                .isFalse();
        assertThat(cancellations.isCancelled("r-2")).isTrue();
        assertThat(registry.get("image_worker_cancels_dropped").counter().count())
                .isEqualTo(1);
        assertThat(cancellations.heldBytes()).isEqualTo(BOUND);

        cancellations.cancel("a-5", clock.millis() + Duration.ofMinutes(50).toMillis());
        clock.advance(RETENTION);
        assertThat(cancellations.isCancelled("a-5"))
                .as("an hour from its arrival")
                .isFalse();
        assertThat(cancellations.held()).isZero();
    }

    /**
     * Issue 48: eviction was global, oldest first, so a storm of one producer forgot every earlier cancel of every
     * producer. Beyond the bound the producer holding the most loses its own oldest first: A's earlier cancels survive
     * B's storm, and a cancel A sends after it too; memory stays within the bound.
     */
    @Test
    void aStormOfOneProducerForgetsItsOwnCancelsFirstAndAnothersEarlierOnesSurvive() {
        long bound = 1_000 * Cancellations.bytesOf("storm-0000")
                + Cancellations.bytesOfProducer("a")
                + Cancellations.bytesOfProducer("b");
        Cancellations bounded = new Cancellations(clock, RETENTION, bound, true, registry);
        bounded.cancel("a-1", "a", clock.millis());
        bounded.cancel("a-2", "a", clock.millis());
        clock.advance(Duration.ofMinutes(1));
        for (int i = 0; i < 20_000; i++) {
            bounded.cancel(String.format("storm-%04d", i % 10_000) + (i < 10_000 ? "" : "x"), "b", clock.millis());
        }
        clock.advance(Duration.ofMinutes(1));
        bounded.cancel("a-3", "a", clock.millis());
        bounded.cancel("storm-last", "b", clock.millis());

        assertThat(bounded.isCancelled("a-1")).as("A's earlier cancel").isTrue();
        assertThat(bounded.isCancelled("a-2")).isTrue();
        assertThat(bounded.isCancelled("a-3")).as("A's cancel after the storm").isTrue();
        assertThat(bounded.isCancelled("storm-last")).as("B's newest").isTrue();
        assertThat(bounded.isCancelled("storm-0000"))
                .as("B's oldest, forgotten")
                .isFalse();
        assertThat(bounded.heldBytes()).isLessThanOrEqualTo(bound);
        assertThat(bounded.producersHolding()).isEqualTo(2);
    }

    /**
     * A storm spread over many producer names, one cancel each: every name holds as little as A, and the one whose
     * last cancel came latest goes first, so the storm forgets its own newest names and A's earlier cancel stays.
     */
    @Test
    void aStormSpreadOverManyProducerNamesForgetsItsOwnNewestNamesNotAnEarlierProducers() {
        long bound = 100 * (Cancellations.bytesOf("r-0000") + Cancellations.bytesOfProducer("p-0000"));
        Cancellations bounded = new Cancellations(clock, RETENTION, bound, true, registry);
        bounded.cancel("r-aaaa", "a", clock.millis());
        clock.advance(Duration.ofMinutes(1));
        for (int i = 0; i < 10_000; i++) {
            bounded.cancel(String.format("r-%04d", i), String.format("p-%04d", i), clock.millis());
        }

        assertThat(bounded.isCancelled("r-aaaa")).isTrue();
        assertThat(bounded.heldBytes()).isLessThanOrEqualTo(bound);
        assertThat(bounded.producersHolding()).isLessThanOrEqualTo(100);
    }

    /** A producer holding more than another loses its cancels first, even its newer ones. */
    @Test
    void theProducerHoldingTheMostLosesFirst() {
        long bound = 4 * Cancellations.bytesOf("r-1")
                + Cancellations.bytesOfProducer("a")
                + Cancellations.bytesOfProducer("b");
        Cancellations bounded = new Cancellations(clock, RETENTION, bound, true, registry);
        bounded.cancel("r-1", "a", clock.millis());
        clock.advance(Duration.ofMinutes(1));
        bounded.cancel("r-2", "b", clock.millis());
        bounded.cancel("r-3", "b", clock.millis());
        bounded.cancel("r-4", "b", clock.millis());
        bounded.cancel("r-5", "b", clock.millis());

        assertThat(bounded.isCancelled("r-1")).as("a's, the oldest of all").isTrue();
        assertThat(bounded.isCancelled("r-2")).as("b's oldest").isFalse();
        assertThat(bounded.isCancelled("r-5")).isTrue();
        assertThat(bounded.held()).isEqualTo(4);
        assertThat(bounded.heldBytes()).isEqualTo(bound);
    }

    @Test
    void anIdSentAgainHoldsOneEntry() {
        for (int i = 0; i < 1_000; i++) {
            cancellations.cancel("again", clock.millis() - 1_000 + i);
        }

        assertThat(cancellations.held()).isEqualTo(1);
        assertThat(cancellations.heldBytes())
                .isEqualTo(Cancellations.bytesOf("again") + Cancellations.bytesOfProducer("default"));
        clock.advance(RETENTION.minusMillis(2));
        assertThat(cancellations.isCancelled("again"))
                .as("kept from its latest time")
                .isTrue();
    }

    @Test
    void aTicketIsStoppedByACancelUntilItsFirstCallThenNeverAgain() {
        Cancellations.Ticket before = cancellations.ticket("known", false);
        cancellations.cancel("known", clock.millis());
        assertThat(before.cancelled()).isTrue();
        assertThat(before.mayCall()).isFalse();

        Cancellations.Ticket called = cancellations.ticket("called", false);
        assertThat(called.mayCall()).isTrue();
        cancellations.cancel("called", clock.millis());
        assertThat(called.cancelled()).isFalse();
        assertThat(called.mayCall()).isTrue();

        Cancellations.Ticket later = cancellations.ticket("known", false);
        assertThat(later.mayCall()).isFalse();

        Cancellations.Ticket recorded = cancellations.ticket("known", true);
        assertThat(recorded.cancelled()).isFalse();
        assertThat(recorded.mayCall()).isTrue();
    }

    @Test
    void aWaitIsCutShortByACancelThatComesMeanwhile() {
        // The request's work is under way (RequestsInProgress.begun, as RequestProcessor begins it): a cancel stops it.
        progress.begun("waiting");
        Cancellations.Ticket ticket = cancellations.ticket("waiting", false);
        var result = ticket.unlessCancelled(Uni.createFrom().<String>nothing(), () -> "cancelled")
                .subscribe()
                .asCompletionStage();

        assertThat(result).isNotDone();
        cancellations.cancel("waiting", clock.millis());

        assertThat(result).isCompletedWithValue("cancelled");
        ticket.close();
    }

    @Test
    void onlyRequestsThatEndCancelledAreCounted() {
        cancellations.ended(failed(ErrorCode.CANCELLED));
        cancellations.ended(failed(ErrorCode.EXPIRED));

        assertThat(registry.get("image_worker_requests_cancelled").counter().count())
                .isEqualTo(1.0);
    }

    @Test
    void offItNeverCancelsAndExportsZeros() {
        SimpleMeterRegistry quiet = new SimpleMeterRegistry();
        Cancellations off = new Cancellations(clock, RETENTION, 3 * Cancellations.bytesOf("r-1"), false, quiet);
        Cancellations.Ticket ticket = off.ticket("r-1", false);

        assertThat(ticket.cancelled()).isFalse();
        assertThat(ticket.mayCall()).isTrue();
        // The same series as with cancellation on (the dashboard draws them), at 0.
        assertThat(quiet.get("image_worker_requests_cancelled").counter().count())
                .isZero();
        assertThat(quiet.get("image_worker_cancels_held").gauge().value()).isZero();
    }

    @Test
    void aRetentionMustBePositive() {
        assertThatThrownBy(() -> new Cancellations(clock, Duration.ZERO, Cancellations.MAX_HELD_BYTES, true, registry))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("retention");
    }

    private static TerminalEvent failed(ErrorCode code) {
        return new TerminalEvent.Failed(
                "r-1",
                "generate",
                new TerminalEvent.Error(code, "m", false, null, null),
                null,
                null,
                0,
                Billing.NONE,
                new TerminalEvent.Timings(Instant.EPOCH, Instant.EPOCH, Instant.EPOCH, null, null),
                Map.of(),
                null);
    }

    /** A clock that moves only when told. */
    private static final class MovingClock extends Clock {
        private Instant now;

        MovingClock(Instant start) {
            this.now = start;
        }

        void advance(Duration duration) {
            now = now.plus(duration);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public long millis() {
            return now.toEpochMilli();
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }
}
