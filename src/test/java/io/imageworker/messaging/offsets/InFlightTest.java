package io.imageworker.messaging.offsets;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.messaging.offsets.PartitionWork.Start;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Pauses;
import io.imageworker.support.Shutdown;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The records taken and not yet ended: which run, how they end, and the graceful drain that waits for them. */
class InFlightTest {

    private static final TopicPartition P0 = new TopicPartition("requests", 0);
    private static final Duration MAX_AGE = Duration.ofSeconds(4);

    private final AtomicLong now = new AtomicLong();
    private final PartitionWork work = new PartitionWork();
    private final Pauses pauses = new Pauses(now::get);
    private final RequestsInProgress progress = new RequestsInProgress(pauses);
    private final PauseAwareCommit commit = new PauseAwareCommit(null, pauses, progress, work, new ConsumerCommits());
    private final Shutdown shutdown = new Shutdown();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InFlight inFlight = new InFlight(work, progress, shutdown, registry);
    private final TakenRecords taken = new TakenRecords();

    private InFlight.Run take(long offset) {
        return inFlight.take(taken.record(P0, offset));
    }

    @Test
    void aRecordTakenRunsAndIsCountedAndWatchedUntilItIsFinished() {
        InFlight.Run run = take(10);

        assertThat(run.start()).isEqualTo(Start.RUN);
        assertThat(inFlight.count()).isEqualTo(1);
        assertThat(work.runs(taken.record(P0, 10))).isTrue();
        now.addAndGet(Duration.ofSeconds(5).toNanos());
        assertThat(commit.stuck(MAX_AGE))
                .as("its age watched by the commit strategy")
                .isTrue();

        run.end(InFlight.Outcome.ACKNOWLEDGED);
        run.finished();

        assertThat(inFlight.count()).isZero();
        assertThat(work.runs(taken.record(P0, 10))).isFalse();
        assertThat(commit.stuck(MAX_AGE)).isFalse();
        assertThat(work.commitsIf(P0.topic(), List.of()))
                .as("acknowledged: committed past it")
                .isEqualTo(Map.of(P0, new OffsetAndMetadata(11, "")));
    }

    /**
     * One count of the requests in progress: the gauge is what the drain waits for, a request of a partition given up
     * included while it still runs (it still holds its gateway call and memory), until it is finished.
     */
    @Test
    void theGaugeOfRequestsInProgressIsTheOneCountTheDrainWaitsFor() throws Exception {
        InFlight.Run run = take(10);
        work.release(List.of(P0), Duration.ZERO);

        assertThat(inProgressGauge()).as("given up, still running").isEqualTo(1);
        assertThat(inFlight.count()).isEqualTo(1);

        run.end(InFlight.Outcome.UNACKNOWLEDGED);
        run.finished();

        assertThat(inProgressGauge()).isZero();
    }

    private double inProgressGauge() {
        return registry.get("image_worker_requests_in_progress").gauge().value();
    }

    @Test
    void aRecordNotAcknowledgedHoldsItsPartitionsCommitBack() {
        InFlight.Run first = take(10);
        InFlight.Run second = take(11);

        first.end(InFlight.Outcome.UNACKNOWLEDGED);
        first.finished();
        second.end(InFlight.Outcome.ACKNOWLEDGED);
        second.finished();

        assertThat(inFlight.count()).isZero();
        assertThat(work.commitsIf(P0.topic(), List.of())).isEqualTo(Map.of(P0, new OffsetAndMetadata(10, "iw1:1")));
    }

    @Test
    void aRecordTheLastOwnerFinishedIsNotRunAgainAndNotCounted() {
        work.assigned(List.of(P0), Map.of(P0, new OffsetAndMetadata(5, "iw1:2")));

        assertThat(take(5).start()).isEqualTo(Start.RUN);
        assertThat(take(7).start()).isEqualTo(Start.DONE);
        assertThat(inFlight.count()).isEqualTo(1);
    }

    @Test
    void aRecordOfAPartitionTakenAwayIsLeftAndNotCounted() throws Exception {
        work.release(List.of(P0), Duration.ZERO);

        InFlight.Run run = take(3);
        run.finished();

        assertThat(run.start()).isEqualTo(Start.LEFT);
        assertThat(inFlight.count()).isZero();
        assertThat(work.running(List.of(P0))).isZero();
    }

    /**
     * A rebalance takes a partition away while a request of it has not called yet and gives it back to this worker:
     * the request's record is taken again, a new copy, which shares the place of the copy given up (and its work).
     * Whether the request may call is this new copy's to answer, not the old one's: asked of the old one's run alone,
     * it was handed over, and the new copy's record left unacknowledged on a partition this worker still owns.
     */
    @Test
    void aCopyGivenUpInARebalanceDoesNotAnswerForTheCopyReadAgainInThePartitionGivenBack() throws Exception {
        work.assigned(List.of(P0), Map.of());
        InFlight.Run old = take(10);
        RequestsInProgress.Place place = progress.place("r-10", null, old);
        work.release(List.of(P0), Duration.ZERO);
        work.assigned(List.of(P0), Map.of());
        InFlight.Run again = inFlight.take(TakenRecords.takenAgain(P0, 10));

        assertThat(old.waitsToCall()).as("the copy given up").isFalse();
        assertThat(again.start()).isEqualTo(Start.RUN);
        assertThat(progress.place("r-10", null, again))
                .as("one place for both copies")
                .isSameAs(place);
        assertThat(place.run()).as("the copy that acts for the request").isSameAs(again);
        assertThat(place.waitsToCall()).isTrue();
        assertThat(place.callLeaves()).isTrue();
        assertThat(place.mayGoOn()).isTrue();

        progress.unplace("r-10", place, old);
        assertThat(progress.placeOf("r-10")).contains(place);
        work.release(List.of(P0), Duration.ZERO);
        assertThat(place.callLeaves())
                .as("no copy's partition is this worker's")
                .isFalse();
    }

    @Test
    void fromTheDrainNoRecordIsTakenAndNoGatewayCallStarts() {
        inFlight.drain(Duration.ofMinutes(1));

        assertThat(take(3).start()).isEqualTo(Start.LEFT);
        assertThat(work.running(List.of(P0)))
                .as("left untouched, for the next consumer")
                .isZero();
        assertThat(inFlight.count()).isZero();
        assertThat(shutdown.callsAllowed()).isFalse();
        assertThat(shutdown.abandoned()).isFalse();
    }

    @Test
    void theDrainWakesWhenTheLastRequestInProgressEnds() throws Exception {
        InFlight.Run first = take(1);
        InFlight.Run last = take(2);
        Duration grace = Duration.ofMinutes(5);
        InFlight.Drain drain = inFlight.drain(grace);
        long started = System.nanoTime();
        CompletableFuture<Integer> left = CompletableFuture.supplyAsync(drain::await);

        first.finished();
        assertThat(left).as("one request is still in progress").isNotDone();
        last.finished();

        assertThat(left.get(60, TimeUnit.SECONDS)).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(grace);
        assertThat(shutdown.abandoned()).isTrue();
    }

    @Test
    void theDrainEndsAtItsDeadlineAndAbandonsWhatStillRuns() {
        take(1);
        Duration grace = Duration.ofMillis(300);
        long started = System.nanoTime();

        int left = inFlight.drain(grace).await();

        assertThat(left).isEqualTo(1);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(grace);
        assertThat(shutdown.abandoned())
                .as("what still runs ends neither failed nor acknowledged")
                .isTrue();
    }
}
