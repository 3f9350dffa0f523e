package io.imageworker.turns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.imageworker.config.ProducerWeights;
import io.imageworker.contract.Lane;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The turns at their own seam, as both of their users see them: the gateway's calls (whose limit moves) and the
 * read-ahead's places in progress (producers held over their cap, a place given back aside). Each test holds every
 * place with a run of its own and then frees one place at a time, so that the order the waiting claims got theirs is
 * the order of the turns.
 */
class FairTurnsTest {

    /** Turns of {@code places} places, each taken by a run that holds it until {@link #free} ends it. */
    private static final class Held {
        final FairTurns turns;
        final List<UniEmitter<? super String>> running = Collections.synchronizedList(new ArrayList<>());
        final List<String> order = Collections.synchronizedList(new ArrayList<>());
        private int freed;

        Held(FairTurns turns, int places) {
            this.turns = turns;
            for (int i = 0; i < places; i++) {
                claim(Lane.NORMAL, "first", "first");
            }
            order.clear();
        }

        /** A claim of {@code producer} in {@code lane} that notes {@code note} when it has its place, and keeps it. */
        Cancellable claim(Lane lane, String producer, String note) {
            return turns.run(lane, producer, () -> {
                        order.add(note);
                        return Uni.createFrom().<String>emitter(running::add);
                    })
                    .subscribe()
                    .with(ignored -> {});
        }

        /** Ends the oldest run still holding its place. */
        void free() {
            running.get(freed++).complete("done");
        }

        /** Ends {@code count} runs one at a time. */
        void free(int count) {
            for (int i = 0; i < count; i++) {
                free();
            }
        }
    }

    private static long count(List<String> notes, String note) {
        return notes.stream().filter(note::equals).count();
    }

    @Test
    void weightsGiveEachProducerItsShareOfThePlacesWhileBothWait() {
        Held held = new Held(new FairTurns(1, 0, ProducerWeights.parse("light=1,heavy=3")), 1);
        for (int i = 0; i < 10; i++) {
            held.claim(Lane.NORMAL, "light", "light");
        }
        for (int i = 0; i < 30; i++) {
            held.claim(Lane.NORMAL, "heavy", "heavy");
        }

        held.free(40);

        // Both wait throughout: heavy has 3 places for each of light's, in every run of four, not in bursts.
        for (int run = 0; run < 10; run++) {
            List<String> four = held.order.subList(run * 4, run * 4 + 4);
            assertThat(count(four, "heavy")).as("run %d: %s", run, four).isEqualTo(3);
        }
        assertThat(held.turns.waiting()).isZero();
    }

    @Test
    void thePriorityLaneComesFirstButForTheNormalLanesLeastShare() {
        Held held = new Held(new FairTurns(1, 0.25, ProducerWeights.EQUAL), 1);
        for (int i = 0; i < 10; i++) {
            held.claim(Lane.NORMAL, "a", "normal");
        }
        for (int i = 0; i < 12; i++) {
            held.claim(Lane.PRIORITY, "a", "priority");
        }

        held.free(22);

        // One place in four goes to the normal lane while both wait, though all its claims came first.
        assertThat(held.order.subList(0, 8))
                .containsExactly(
                        "priority", "priority", "priority", "normal", "priority", "priority", "priority", "normal");
        assertThat(count(held.order.subList(0, 16), "priority")).isEqualTo(12);
        assertThat(held.order.subList(16, 22)).containsOnly("normal");
    }

    @Test
    void aHeldProducerGetsNoPlaceUntilARecheckFindsItHeldNoMore() {
        Held held = new Held(new FairTurns(1, 0, ProducerWeights.EQUAL), 1);
        Set<String> over = ConcurrentHashMap.newKeySet();
        over.add("capped");
        held.turns.holdWhile(over::contains);
        held.claim(Lane.NORMAL, "capped", "capped");
        held.claim(Lane.NORMAL, "other", "other");

        held.free(2);

        assertThat(held.order).containsExactly("other");
        assertThat(held.turns.inFlight()).isZero();
        assertThat(held.turns.waiting("capped")).isEqualTo(1);

        over.clear();
        held.turns.recheck();

        assertThat(held.order).containsExactly("other", "capped");
        assertThat(held.turns.inFlight()).isEqualTo(1);
    }

    @Test
    void aPlaceGivenBackAsideGoesToTheNextAndIsTakenAgainFirstOfItsProducerEvenHeld() {
        Held held = new Held(new FairTurns(1, 0, ProducerWeights.EQUAL), 0);
        Set<String> over = ConcurrentHashMap.newKeySet();
        held.turns.holdWhile(over::contains);
        List<UniEmitter<? super String>> asideWaits = new ArrayList<>();
        held.turns
                .<String>run(Lane.NORMAL, "a", turn -> {
                    held.order.add("a aside");
                    return turn.aside(Uni.createFrom().<String>emitter(asideWaits::add))
                            .invoke(() -> held.order.add("a back"))
                            .chain(() -> Uni.createFrom().<String>emitter(held.running::add));
                })
                .subscribe()
                .with(ignored -> {});
        held.claim(Lane.NORMAL, "b", "b");
        held.claim(Lane.NORMAL, "a", "a again");
        assertThat(held.order).as("a's place went to b while a waits aside").containsExactly("a aside", "b");

        over.add("a");
        asideWaits.get(0).complete("its wait is over");
        held.free();

        assertThat(held.order)
                .as("taken back before a's queued claim, though a is held")
                .endsWith("a back");
        held.free();
        assertThat(held.turns.inFlight()).isZero();
        assertThat(held.turns.waiting("a")).isEqualTo(1);
    }

    @Test
    void morePlacesGoToTheClaimsInTurnAndFewerTakeNoneBack() {
        Held held = new Held(new FairTurns(2, 0, ProducerWeights.EQUAL), 2);
        held.claim(Lane.NORMAL, "a", "a");
        held.claim(Lane.NORMAL, "b", "b");
        held.claim(Lane.NORMAL, "a", "a");

        held.turns.changePlaces(places -> places + 2);

        assertThat(held.order).containsExactly("a", "b");
        assertThat(held.turns.inFlight()).isEqualTo(4);

        held.turns.changePlaces(places -> 1);
        assertThat(held.turns.inFlight())
                .as("the runs above the number end first")
                .isEqualTo(4);
        held.free(3);
        assertThat(held.order).as("no place while more than one is taken").containsExactly("a", "b");
        held.free();
        assertThat(held.order).containsExactly("a", "b", "a");
    }

    @Test
    void aCancelledClaimLeavesItsProducersQueueAndTakesNoPlace() {
        Held held = new Held(new FairTurns(1, 0, ProducerWeights.EQUAL), 1);
        Cancellable gone = held.claim(Lane.NORMAL, "a", "a");
        held.claim(Lane.NORMAL, "b", "b");

        gone.cancel();
        held.free();

        assertThat(held.order).containsExactly("b");
        assertThat(held.turns.waiting()).isZero();
        held.free();
        assertThat(held.turns.inFlight()).isZero();
    }

    @Test
    void refusesNoPlacesAndAShareOutsideZeroToOne() {
        assertThatThrownBy(() -> new FairTurns(0, 0, ProducerWeights.EQUAL))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FairTurns(1, 1.5, ProducerWeights.EQUAL))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
