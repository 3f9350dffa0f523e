package io.imageworker.messaging.offsets;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Pauses;
import io.imageworker.support.Pauses.Reason;
import io.smallrye.reactive.messaging.kafka.commit.KafkaThrottledLatestProcessedCommit.TooManyMessagesWithoutAckException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** Which of the throttled strategy's "waited too long" reports reach the channel, on a clock of its own. */
class PauseAwareCommitTest {

    private static final Duration MAX_AGE = Duration.ofSeconds(4);

    private final AtomicLong now = new AtomicLong();
    private final Pauses pauses = new Pauses(now::get);
    private final RequestsInProgress progress = new RequestsInProgress(pauses);
    private final PauseAwareCommit commit =
            new PauseAwareCommit(null, pauses, progress, new PartitionWork(), new ConsumerCommits());

    /** A record the request stream takes: in progress until it is {@link Tracked#done()}. */
    private Tracked track() {
        Tracked tracked = new Tracked();
        progress.started(tracked);
        return tracked;
    }

    /** A record in progress, as {@link RequestsInProgress} holds it. */
    private final class Tracked extends RequestsInProgress.Taken {
        Tracked() {
            super("image-request", 0);
        }

        @Override
        public void waiting() {
            progress.waiting(this);
        }

        @Override
        public void admitted() {
            progress.admitted(this);
        }

        void done() {
            progress.ended(this);
        }

        @Override
        public boolean mayGoOn() {
            return true;
        }

        @Override
        public boolean waitsToCall() {
            return true;
        }

        @Override
        public boolean callLeaves() {
            return true;
        }
    }

    private void after(Duration time) {
        now.addAndGet(time.toNanos());
    }

    private static Throwable waitedTooLong() {
        return new TooManyMessagesWithoutAckException(new TopicPartition("image-request", 0), 7, 5, 1, 6);
    }

    /** Whether the throttled strategy's "waited too long" report, with a max age of {@code MAX_AGE}, is passed on. */
    private boolean reportsWaitedTooLong() {
        return commit.passesOn(waitedTooLong(), MAX_AGE);
    }

    /**
     * With {@code counted} of the wait counted so far (time in a pause, or a record's wait for its turn, does not
     * count): the report is held while 3 s are counted, under the max age, and passed on once 5 s are, over it.
     */
    private void assertPassedOnOnlyPastTheMaxAge(Duration counted, String countedSince) {
        after(Duration.ofSeconds(3).minus(counted));
        assertThat(reportsWaitedTooLong()).as("3 s " + countedSince).isFalse();
        after(Duration.ofSeconds(2));
        assertThat(reportsWaitedTooLong()).as("5 s " + countedSince).isTrue();
    }

    @Test
    void aRecordOlderThanTheMaxAgeWithoutAPauseIsStuck() {
        track();
        after(Duration.ofSeconds(5));

        assertThat(reportsWaitedTooLong()).isTrue();
    }

    @Test
    void aRecordHeldByAPauseIsNotStuckHoweverLongThePause() {
        track();
        after(Duration.ofSeconds(1));
        pauses.begin(Reason.GATEWAY_FAULT);
        after(Duration.ofHours(60));

        assertThat(reportsWaitedTooLong()).isFalse();

        pauses.end(Reason.GATEWAY_FAULT);
        assertPassedOnOnlyPastTheMaxAge(Duration.ofSeconds(1), "outside the pause");
    }

    @Test
    void overlappingPausesCountOnce() {
        track();
        pauses.begin(Reason.BUDGET);
        after(Duration.ofSeconds(10));
        pauses.begin(Reason.GATEWAY_FAULT);
        pauses.begin(Reason.BUDGET);
        after(Duration.ofSeconds(10));
        pauses.end(Reason.BUDGET);
        pauses.end(Reason.BUDGET);
        after(Duration.ofSeconds(10));
        pauses.end(Reason.GATEWAY_FAULT);

        assertThat(pauses.pausedNanos()).isEqualTo(Duration.ofSeconds(30).toNanos());
        assertPassedOnOnlyPastTheMaxAge(Duration.ZERO, "outside the pauses");
    }

    @Test
    void aRecordWaitingForItsTurnIsNotStuckHoweverLongAndCountsFromItsTurn() {
        // Read ahead (contract v1.2, fair shares): a record waits for its place in progress behind a backlog.
        Tracked tracked = track();
        tracked.waiting();
        after(Duration.ofHours(2));

        assertThat(reportsWaitedTooLong()).isFalse();

        tracked.admitted();
        assertPassedOnOnlyPastTheMaxAge(Duration.ZERO, "since its turn");
    }

    @Test
    void aRecordThatNeverWaitedIsJudgedAsBeforeWhileAnotherWaits() {
        track();
        Tracked waiting = track();
        waiting.waiting();
        after(Duration.ofSeconds(5));

        assertThat(reportsWaitedTooLong()).isTrue();
    }

    @Test
    void aRecordDoneWaitsNoMore() {
        Tracked first = track();
        pauses.begin(Reason.BUDGET);
        after(Duration.ofSeconds(10));
        pauses.end(Reason.BUDGET);
        after(Duration.ofSeconds(1));
        first.done();
        track();
        after(Duration.ofSeconds(5));

        assertThat(reportsWaitedTooLong()).as("a record taken after the pause").isTrue();
    }

    @Test
    void aReportNoTrackedRecordExplainsIsPassedOnOnceThePauseIsAMaxAgeAgo() {
        pauses.begin(Reason.GATEWAY_FAULT);
        after(Duration.ofSeconds(30));
        pauses.end(Reason.GATEWAY_FAULT);

        assertPassedOnOnlyPastTheMaxAge(Duration.ZERO, "since the pause");
    }

    @Test
    void otherFailuresAreAlwaysPassedOn() {
        pauses.begin(Reason.GATEWAY_FAULT);

        assertThat(commit.passesOn(new IllegalStateException("broker gone"), MAX_AGE))
                .isTrue();
    }
}
