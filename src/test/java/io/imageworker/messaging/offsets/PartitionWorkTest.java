package io.imageworker.messaging.offsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.messaging.offsets.PartitionWork.Start;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class PartitionWorkTest {

    private static final TopicPartition P0 = new TopicPartition("requests", 0);
    private static final TopicPartition P1 = new TopicPartition("requests", 1);

    private final PartitionWork work = new PartitionWork();

    private final TakenRecords taken = new TakenRecords();

    /** The copy of the record at this offset the worker took (one per test: the same record taken once). */
    private RecordCopy record(TopicPartition partition, long offset) {
        return taken.record(partition, offset);
    }

    private void start(TopicPartition partition, long... offsets) {
        for (long offset : offsets) {
            assertThat(work.started(record(partition, offset))).isEqualTo(Start.RUN);
        }
    }

    /** Releases {@code partition} on another thread, waiting up to {@code grace}; returns once it is being released. */
    private CompletableFuture<Released> releasing(TopicPartition partition, Duration grace) {
        CompletableFuture<Released> release = CompletableFuture.supplyAsync(() -> {
            try {
                return work.release(List.of(partition), grace);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(Duration.ofSeconds(30)).until(() -> !work.takes(partition));
        return release;
    }

    @Test
    void commitsUpToTheFirstRequestNotAcknowledged() throws Exception {
        start(P0, 10, 11, 12, 13);
        work.ended(record(P0, 10), true);
        work.ended(record(P0, 12), true);
        work.ended(record(P0, 13), true);

        Released release = work.release(List.of(P0), Duration.ZERO);

        // 11 is still running: never committed past it, whatever finished after it.
        assertThat(release.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(11, "iw1:1-2")));
        assertThat(release.givenUp()).isEqualTo(1);
    }

    @Test
    void aRevocationDoesNotWaitForRecordsWaitingForTheirTurnButNeverCommitsPastThem() throws Exception {
        // Read ahead (contract v1.2): 21 and 22 wait for their turn behind a backlog, 23 (another producer's) is done.
        start(P0, 20, 21, 22, 23);
        work.waiting(record(P0, 21));
        work.waiting(record(P0, 22));
        work.ended(record(P0, 20), true);
        work.ended(record(P0, 23), true);

        // No request at work: the release does not wait its grace for the records waiting for their turn.
        long started = System.nanoTime();
        Released release = work.release(List.of(P0), Duration.ofMinutes(5));

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofMinutes(1));
        assertThat(release.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(21, "iw1:2")));
        // Nothing was done for them: they are handed over, not given up (a request given up may be called again).
        assertThat(release.givenUp()).isZero();
        assertThat(release.handedOver()).isEqualTo(2);
        // Their turn comes after the release: they do not run here any more.
        work.admitted(record(P0, 21));
        assertThat(work.runs(record(P0, 21))).isFalse();
    }

    @Test
    void aRecordWhoseTurnComesWhileTheGraceWaitsDoesNotStart() throws Exception {
        // 40 is at work, 41 waits for its turn: the release waits for 40 only.
        start(P0, 40, 41);
        work.waiting(record(P0, 41));
        assertThat(work.mayStart(record(P0, 41))).isTrue();
        CompletableFuture<Released> release = releasing(P0, Duration.ofMinutes(1));

        // Its turn comes during the grace: it is left to the new owner, not called for while the grace waits.
        work.admitted(record(P0, 41));
        assertThat(work.runs(record(P0, 41))).isTrue();
        assertThat(work.mayStart(record(P0, 41))).isFalse();
        work.ended(record(P0, 41), false);
        work.ended(record(P0, 40), true);

        Released released = release.get(30, TimeUnit.SECONDS);
        assertThat(released.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(41, "")));
        assertThat(released.givenUp()).isZero();
        assertThat(released.finished()).isEqualTo(1);
        assertThat(released.handedOver()).isEqualTo(1);
    }

    /** Seen in a log as "-11 request(s) finished during the wait": turns that came as the release began. */
    @Test
    void aRecordWhoseTurnComesAsTheReleaseBeginsIsCountedHandedOverNotFinished() throws Exception {
        start(P0, 60, 61);
        work.waiting(record(P0, 61));
        work.ended(record(P0, 60), true);
        // Its turn comes as the partition is let go (the gates opened, the listeners told): it does not start here.
        work.whenReleased(partitions -> work.ended(record(P0, 61), false));

        Released released = work.release(List.of(P0), Duration.ofSeconds(30));

        assertThat(released.handedOver()).isEqualTo(1);
        assertThat(released.finished()).isZero();
        assertThat(released.givenUp()).isZero();
    }

    @Test
    void aRevocationDoesNotWaitForARequestWaitingForItsFirstCallWhichThenMakesNone() throws Exception {
        // 50 has its call in flight; 51 waits for a call slot behind it (calls of minutes: waiting for its slot could
        // take a whole call, and its call would then be cut off by the hand-off).
        start(P0, 50, 51);
        assertThat(work.waitsToCall(record(P0, 50))).isTrue();
        assertThat(work.callLeaves(record(P0, 50))).isTrue();
        assertThat(work.waitsToCall(record(P0, 51))).isTrue();
        CompletableFuture<Released> release = releasing(P0, Duration.ofMinutes(5));

        // 51's slot comes during the wait: its call does not leave, the new owner makes it.
        assertThat(work.callLeaves(record(P0, 51))).isFalse();
        assertThat(work.waitsToCall(record(P0, 51))).isFalse();
        work.ended(record(P0, 51), false);
        assertThat(release).isNotDone();
        // 50's call in flight is waited for, however long: it ends, is published and committed before the hand-off.
        work.ended(record(P0, 50), true);

        Released released = release.get(30, TimeUnit.SECONDS);
        assertThat(released.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(51, "")));
        assertThat(released.givenUp()).isZero();
        assertThat(released.finished()).isEqualTo(1);
        assertThat(released.handedOver()).isEqualTo(1);
    }

    @Test
    void aRevocationEndsAtOnceWhenEveryRequestStillWaitsForItsFirstCall() throws Exception {
        start(P0, 60, 61);
        work.waitsToCall(record(P0, 60));
        work.waitsToCall(record(P0, 61));

        long started = System.nanoTime();
        Released release = work.release(List.of(P0), Duration.ofSeconds(60));

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
        assertThat(release.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(60, "")));
        assertThat(release.givenUp()).isZero();
        assertThat(release.handedOver()).isEqualTo(2);
        // Given to the new owner: no call of theirs leaves here, even if the partition comes back (a copy taken again
        // is another record).
        work.assigned(List.of(P0), Map.of());
        assertThat(work.callLeaves(record(P0, 60))).isFalse();
    }

    @Test
    void aRequestThatMadeACallIsWaitedForWhileItWaitsForItsNextOne() throws Exception {
        // 70's first call failed with an unknown outcome and it waits for its retry: it was called, so the revocation
        // waits for it (its retry does not leave, and it ends), rather than hand it over with an answer on its way.
        start(P0, 70);
        work.waitsToCall(record(P0, 70));
        work.callLeaves(record(P0, 70));
        work.waitsToCall(record(P0, 70));
        CompletableFuture<Released> release = releasing(P0, Duration.ofMinutes(5));

        assertThat(work.waitsToCall(record(P0, 70))).isFalse();
        assertThat(release).isNotDone();
        work.ended(record(P0, 70), false);

        Released released = release.get(30, TimeUnit.SECONDS);
        assertThat(released.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(70, "")));
        assertThat(released.finished()).isEqualTo(1);
        assertThat(released.handedOver()).isZero();
    }

    @Test
    void aRecordWhoseTurnCameIsWaitedForAgain() throws Exception {
        start(P0, 30);
        work.waiting(record(P0, 30));
        work.admitted(record(P0, 30));
        CompletableFuture<Released> release = releasing(P0, Duration.ofMinutes(1));

        work.ended(record(P0, 30), true);

        assertThat(release.get(30, TimeUnit.SECONDS).commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(31, "")));
    }

    @Test
    void commitsPastEverythingWhenAllIsAcknowledgedAndNeverPastARecordThatWasNot() throws Exception {
        start(P0, 5, 6);
        start(P1, 7, 8);
        work.ended(record(P0, 5), true);
        work.ended(record(P0, 6), true);
        work.ended(record(P1, 7), false);
        work.ended(record(P1, 8), true);

        Released release = work.release(List.of(P0, P1), Duration.ZERO);

        // 7 is done again by the next owner; 8 is not: it is named in the metadata.
        assertThat(release.commits())
                .isEqualTo(Map.of(P0, new OffsetAndMetadata(7), P1, new OffsetAndMetadata(7, "iw1:1")));
        assertThat(release.givenUp()).isZero();
    }

    @Test
    void waitsForTheRequestsOnTheRevokedPartitionsOnlyAndCommitsWhatTheyAcknowledge() throws Exception {
        start(P0, 1, 2);
        start(P1, 3);
        CompletableFuture<Released> release = releasing(P0, Duration.ofSeconds(30));
        assertThat(work.started(record(P0, 4))).isEqualTo(Start.LEFT);
        work.ended(record(P0, 1), true);
        assertThat(release).isNotDone();

        work.ended(record(P0, 2), true);

        Released released = release.get(5, TimeUnit.SECONDS);
        assertThat(released.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(3)));
        assertThat(released.finished()).isEqualTo(2);
        assertThat(released.givenUp()).isZero();
        // The partition that stays is untouched.
        assertThat(work.running(List.of(P1))).isEqualTo(1);
    }

    @Test
    void givesUpWhatOutlastsTheGraceAndIgnoresItsEnd() throws Exception {
        start(P0, 1);
        long before = System.nanoTime();

        Released release = work.release(List.of(P0), Duration.ofMillis(300));

        assertThat(Duration.ofNanos(System.nanoTime() - before)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(release.givenUp()).isEqualTo(1);
        assertThat(release.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(1)));
        work.ended(record(P0, 1), true);
        assertThat(work.running(List.of(P0))).isZero();
    }

    @Test
    void leavesTheRecordsOfARevokedPartitionToTheNewOwnerUntilItIsAssignedAgain() throws Exception {
        work.release(List.of(P0), Duration.ZERO);

        assertThat(work.started(record(P0, 9))).isEqualTo(Start.LEFT);
        assertThat(work.started(record(P1, 9))).isEqualTo(Start.RUN);

        work.assigned(List.of(P0), Map.of());
        assertThat(work.started(record(P0, 9))).isEqualTo(Start.RUN);
    }

    @Test
    void namesWhatFinishedAboveTheCommittedOffsetSoThatTheNextOwnerSkipsItAndOnlyIt() throws Exception {
        start(P0, 20, 21, 22, 23, 24, 25);
        work.ended(record(P0, 20), true);
        work.ended(record(P0, 22), true);
        work.ended(record(P0, 23), true);
        work.ended(record(P0, 25), true);
        work.ended(record(P0, 24), false);

        OffsetAndMetadata commit =
                work.release(List.of(P0), Duration.ZERO).commits().get(P0);
        assertThat(commit).isEqualTo(new OffsetAndMetadata(21, "iw1:1-2,4"));

        PartitionWork next = new PartitionWork();
        next.assigned(List.of(P0), Map.of(P0, commit));
        assertThat(next.started(record(P0, 21))).isEqualTo(Start.RUN);
        assertThat(next.started(record(P0, 22))).isEqualTo(Start.DONE);
        assertThat(next.started(record(P0, 23))).isEqualTo(Start.DONE);
        assertThat(next.started(record(P0, 24))).isEqualTo(Start.RUN);
        assertThat(next.started(record(P0, 25))).isEqualTo(Start.DONE);
        // Redelivered once more, a record is done again: it was skipped once, and the skip was committed.
        assertThat(next.started(record(P0, 22))).isEqualTo(Start.RUN);
    }

    @Test
    void passesOnWhatItInheritedAndHasNotReachedWhenItGivesThePartitionUpInTurn() throws Exception {
        work.assigned(List.of(P0), Map.of(P0, new OffsetAndMetadata(21, "iw1:2,5")));
        start(P0, 21);
        assertThat(work.started(record(P0, 22))).isEqualTo(Start.RUN);
        assertThat(work.started(record(P0, 23))).isEqualTo(Start.DONE);
        work.ended(record(P0, 22), true);

        OffsetAndMetadata commit =
                work.release(List.of(P0), Duration.ZERO).commits().get(P0);

        // 21 still runs; 22 this worker finished, 23 and 26 its predecessor did.
        assertThat(commit).isEqualTo(new OffsetAndMetadata(21, "iw1:1-2,5"));
    }

    @Test
    void aPartitionWhoseRecordsAllFinishedCommitsPastThemWithNothingAbove() throws Exception {
        work.assigned(List.of(P0), Map.of(P0, new OffsetAndMetadata(5, "iw1:1")));
        start(P0, 5);
        assertThat(work.started(record(P0, 6))).isEqualTo(Start.DONE);
        work.ended(record(P0, 5), true);

        assertThat(work.release(List.of(P0), Duration.ZERO).commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(7)));
    }

    @Test
    void aCopyGivenUpNeitherRunsOnNorEndsTheCopyTakenAgainWhenThePartitionComesBack() throws Exception {
        RecordCopy first = record(P0, 30);
        assertThat(work.started(first)).isEqualTo(Start.RUN);
        assertThat(work.runs(first)).isTrue();
        // Lost (fenced out of the group) and assigned again: the first copy goes on running, unawaited.
        work.release(List.of(P0), Duration.ZERO);
        work.assigned(List.of(P0), Map.of());
        RecordCopy again = TakenRecords.takenAgain(P0, 30);
        assertThat(work.started(again)).isEqualTo(Start.RUN);

        // Only the copy taken again may publish and commit.
        assertThat(work.runs(first)).isFalse();
        assertThat(work.runs(again)).isTrue();
        assertThat(work.commitsIf(P0.topic(), List.of(first)).get(P0).offset()).isEqualTo(30);
        assertThat(work.commitsIf(P0.topic(), List.of(again)).get(P0).offset()).isEqualTo(31);
        // The first copy's end changes nothing: the copy taken again still holds the partition's commit at 30.
        work.ended(first, true);
        assertThat(work.runs(again)).isTrue();
        assertThat(work.commitsIf(P0.topic(), List.of()).get(P0).offset()).isEqualTo(30);
        work.ended(again, true);
        assertThat(work.runs(again)).isFalse();
        assertThat(work.release(List.of(P0), Duration.ZERO).commits().get(P0).offset())
                .isEqualTo(31);
    }

    @Test
    void aRevocationWaitsNoLongerOnceTheGroupRefusesThisWorkersCommits() throws Exception {
        start(P0, 40);
        CompletableFuture<Released> release = releasing(P0, Duration.ofMinutes(5));

        work.uncommittable();

        Released released = release.get(5, TimeUnit.SECONDS);
        assertThat(released.givenUp()).isEqualTo(1);
        assertThat(work.runs(record(P0, 40))).isFalse();
    }

    @Test
    void aRecordGoesIntoProgressNoFurtherThanTheWindowAboveTheFirstOneNotAcknowledged() {
        start(P0, 5, 6, 5 + FinishedAbove.WINDOW - 1, 5 + FinishedAbove.WINDOW);
        assertThat(mayGo(P0, 5 + FinishedAbove.WINDOW - 1)).isDone();
        CompletableFuture<Void> beyond = mayGo(P0, 5 + FinishedAbove.WINDOW);
        assertThat(beyond).isNotDone();
        // Another partition's records do not wait for it.
        start(P1, 5_000_000);
        assertThat(mayGo(P1, 5_000_000)).isDone();

        work.ended(record(P0, 6), true);
        assertThat(beyond).isNotDone();
        work.ended(record(P0, 5), true);
        assertThat(beyond).isDone();
        // Nothing pending below it: any offset goes.
        work.ended(record(P0, 5 + FinishedAbove.WINDOW - 1), true);
        work.ended(record(P0, 5 + FinishedAbove.WINDOW), true);
        start(P0, 9_000_000);
        assertThat(mayGo(P0, 9_000_000)).isDone();
    }

    @Test
    void aRecordWaitingForItsWindowGoesOnWhenItsPartitionIsTakenAway() throws Exception {
        start(P0, 50, 50 + FinishedAbove.WINDOW);
        CompletableFuture<Void> beyond = mayGo(P0, 50 + FinishedAbove.WINDOW);
        assertThat(beyond).isNotDone();

        CompletableFuture<Released> release = releasing(P0, Duration.ofMinutes(5));

        // It goes on, to find that it may not start (left to the new owner), while the grace waits for record 50.
        beyond.get(5, TimeUnit.SECONDS);
        assertThat(work.mayStart(record(P0, 50 + FinishedAbove.WINDOW))).isFalse();
        work.waiting(record(P0, 50 + FinishedAbove.WINDOW));
        work.ended(record(P0, 50), true);
        Released released = release.get(5, TimeUnit.SECONDS);
        // Handed over, never committed past.
        assertThat(released.handedOver()).isEqualTo(1);
        assertThat(released.commits().get(P0).offset()).isEqualTo(50 + FinishedAbove.WINDOW);
    }

    @Test
    void whateverFinishesOutOfOrderWithinTheWindowIsInTheCommitsMetadata() throws Exception {
        // The first record waits (a producer held by its cap, say) while every other record after it finishes.
        long first = 1_000;
        TreeSet<Long> finished = new TreeSet<>();
        for (long offset = first; offset < first + 2 * FinishedAbove.WINDOW; offset++) {
            start(P0, offset);
            if (!mayGo(P0, offset).isDone()) {
                work.waiting(record(P0, offset));
                continue;
            }
            if (offset > first && offset % 3 != 0) {
                work.ended(record(P0, offset), true);
                finished.add(offset);
            }
        }

        Released release = work.release(List.of(P0), Duration.ZERO);

        OffsetAndMetadata commit = release.commits().get(P0);
        assertThat(commit.offset()).isEqualTo(first);
        assertThat(FinishedAbove.decode(commit.offset(), commit.metadata())).isEqualTo(finished);
        assertThat(finished.last()).isLessThan(first + FinishedAbove.WINDOW);
    }

    /** Whether the record at {@code offset}, taken, may go into progress now: a future completed once it may. */
    private CompletableFuture<Void> mayGo(TopicPartition partition, long offset) {
        return work.within(record(partition, offset)).subscribeAsCompletionStage();
    }
}
