package io.imageworker.progress;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.config.ProducerWeights;
import io.imageworker.contract.ImageStarted;
import io.imageworker.contract.Lane;
import io.imageworker.support.Pauses;
import io.imageworker.turns.FairTurns;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The one registry of what is in progress: what a start and an end change, and what is read from it. */
class RequestsInProgressTest {

    private final AtomicLong now = new AtomicLong();
    private final Pauses pauses = new Pauses(now::get);
    private final RequestsInProgress progress = new RequestsInProgress(pauses);

    private Record taken(int partition) {
        Record record = new Record(partition);
        progress.started(record);
        return record;
    }

    @Test
    void aRecordIsCountedFromItsStartToItsEnd() {
        Record first = taken(0);
        Record second = taken(1);
        assertThat(progress.count()).isEqualTo(2);

        progress.ended(first);
        assertThat(progress.count()).isEqualTo(1);
        progress.ended(second);

        assertThat(progress.count()).isZero();
        assertThat(progress.awaitNoneUnderWay(System.nanoTime())).isZero();
    }

    @Test
    void theWaitForNoneEndsAtTheDeadlineWithWhatIsLeft() {
        taken(0);

        assertThat(progress.awaitNoneUnderWay(
                        System.nanoTime() + Duration.ofMillis(20).toNanos()))
                .isEqualTo(1);
    }

    @Test
    void theDrainWaitsForTheRecordsUnderWayNotForThoseWaitingForTheirTurn() throws Exception {
        Record running = taken(0);
        Record inLine = taken(0);
        progress.waiting(inLine);
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        CompletableFuture<Integer> left = CompletableFuture.supplyAsync(() -> progress.awaitNoneUnderWay(deadline));

        progress.ended(running);

        // Woken by the end, long before the deadline, with the one in line still in progress.
        assertThat(left.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(progress.count()).isEqualTo(1);
    }

    @Test
    void aRecordsTimeCountsNeitherPausesNorItsWaitForItsTurn() {
        Record record = taken(0);
        progress.waiting(record);
        now.addAndGet(Duration.ofHours(1).toNanos());
        assertThat(progress.anyWorkedLongerThan(Duration.ofSeconds(4))).isFalse();
        assertThat(progress.waitedWithin(Duration.ofSeconds(4))).isTrue();

        progress.admitted(record);
        pauses.begin(Pauses.Reason.BUDGET);
        now.addAndGet(Duration.ofHours(1).toNanos());
        pauses.end(Pauses.Reason.BUDGET);
        now.addAndGet(Duration.ofSeconds(3).toNanos());
        assertThat(progress.anyWorkedLongerThan(Duration.ofSeconds(4))).isFalse();

        now.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(progress.anyWorkedLongerThan(Duration.ofSeconds(4))).isTrue();
        assertThat(progress.waitedWithin(Duration.ofSeconds(4))).isFalse();
    }

    @Test
    void aRebalanceTakesOutOfTheirLinesOnlyTheRecordsOfThePartitionsTaken() {
        List<String> left = new ArrayList<>();
        Record onZero = taken(0);
        Record onOne = taken(1);
        Record turnCame = taken(0);
        progress.inLine(onZero, () -> left.add("zero"));
        progress.inLine(onOne, () -> left.add("one"));
        progress.inLine(turnCame, () -> left.add("turn came"));
        progress.outOfLine(turnCame);

        progress.leaveLines(List.of(new TopicPartition("requests", 0)));
        progress.leaveLines(List.of(new TopicPartition("requests", 0)));

        assertThat(left).containsExactly("zero");
    }

    @Test
    void theCopiesOfARequestShareOnePlaceGivenBackWhenTheLastLeavesIt() {
        Record first = taken(0);
        Record copy = taken(1);
        FairTurns turns = new FairTurns(2, 0, ProducerWeights.EQUAL);
        FairTurns.Turn firstTurn = turn(turns);
        FairTurns.Turn copyTurn = turn(turns);

        var place = progress.place("r-1", firstTurn, first);
        assertThat(progress.place("r-1", copyTurn, copy)).isSameAs(place);
        assertThat(progress.placeOf("r-1")).contains(place);
        assertThat(place.run()).isSameAs(first);
        assertThat(place.turn()).isSameAs(firstTurn);

        progress.unplace("r-1", place, first);
        assertThat(progress.placeOf("r-1")).contains(place);
        assertThat(place.run()).isSameAs(copy);
        assertThat(place.turn()).as("the first copy's turn went with it").isSameAs(copyTurn);
        progress.unplace("r-1", place, copy);
        assertThat(progress.placeOf("r-1")).isEmpty();
    }

    /** A turn of {@code turns}, taken at once (a place is free); only which turn it is counts here. */
    private static FairTurns.Turn turn(FairTurns turns) {
        return turns.run(Lane.NORMAL, "a", turn -> Uni.createFrom().item(turn))
                .await()
                .atMost(Duration.ofSeconds(5));
    }

    @Test
    void aRequestsWorkIsUnderWayFromItsBeginningToItsEndAndACancelStopsItThroughItsTicket() {
        List<String> stopped = new ArrayList<>();
        RequestsInProgress.Work work = progress.begun("r-1");
        Runnable stop = () -> stopped.add("r-1");
        work.stoppable(stop);
        assertThat(work.calling()).isFalse();
        assertThat(work.callingSince()).isEqualTo(-1);
        long before = System.currentTimeMillis();
        progress.sent(call("r-1"));
        long first = work.callingSince();
        progress.sent(call("r-1"), "r-1");
        progress.sent(call("r-2"), "r-2");

        assertThat(progress.calling(10)).containsExactly("r-1");
        assertThat(work.calling()).isTrue();
        assertThat(first).isBetween(before, System.currentTimeMillis());
        assertThat(work.callingSince()).as("the first call's time").isEqualTo(first);
        progress.workOf("r-1").orElseThrow().cancelled();
        work.notStoppable(stop);
        work.cancelled();
        assertThat(stopped).containsExactly("r-1");

        assertThat(progress.over("r-1")).containsSame(work);
        assertThat(progress.working()).isZero();
        assertThat(progress.over("r-1")).isEmpty();
    }

    private static ImageStarted call(String requestId) {
        return new ImageStarted(requestId, "generate", 1, null, 0, Instant.now(), Map.of(), null);
    }

    @Test
    void theLastRequestsParkedAreRememberedCountedFromTheirLastPark() {
        progress.parked("first");
        progress.parked("again");
        // Two more than it keeps: the two parked longest ago are forgotten.
        for (int i = 0; i < RequestsInProgress.PARKED_KEPT; i++) {
            if (i == RequestsInProgress.PARKED_KEPT / 2) {
                progress.parked("again");
            }
            progress.parked("p-" + i);
        }

        assertThat(progress.parkedLately("first"))
                .as("parked longest ago: forgotten")
                .isFalse();
        assertThat(progress.parkedLately("again")).as("parked again since").isTrue();
        assertThat(progress.parkedLately("p-0")).as("the next one").isFalse();
        assertThat(progress.parkedLately("p-1")).isTrue();
    }

    @Test
    void aRequestIsKnownByItsProducerAndIdWhereIdsAreUniqueWithinTheirProducer() {
        assertThat(progress.name("a", "r-1")).isEqualTo("r-1");
        RequestsInProgress perProducer = new RequestsInProgress(pauses, true);
        assertThat(perProducer.name("a", "r-1")).isEqualTo("a/r-1");
        assertThat(perProducer.name(null, "r-1")).isEqualTo("r-1");
    }

    @Test
    void aRequestReadAheadTwiceWaitsForItsTurnUntilBothRecordsHadIt() {
        progress.readAhead("r-1");
        progress.readAhead("r-1");
        progress.turnCame("r-1");
        assertThat(progress.waitingForTurn()).containsExactly("r-1");

        progress.turnCame("r-1");
        assertThat(progress.waitingForTurn()).isEmpty();
    }

    @Test
    void aRequestIsBeingParkedUntilTheParksOfAllItsCopiesAreOver() {
        progress.parkUnderWay("r-1");
        progress.parkUnderWay("r-1");
        progress.parkOver("r-1");
        assertThat(progress.parking("r-1")).isTrue();
        assertThat(progress.parking("r-2")).isFalse();

        progress.parkOver("r-1");
        assertThat(progress.parking("r-1")).isFalse();
    }

    /** A record taken, its offsets' answers fixed. */
    private static final class Record extends RequestsInProgress.Taken {
        Record(int partition) {
            super("requests", partition);
        }

        @Override
        public void waiting() {}

        @Override
        public void admitted() {}

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
}
