package io.imageworker.processing;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.processing.RequestStates.State;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The requests a worker holds: queued when taken, calling once a call left, gone when ended, however it ended. */
class RequestStatesTest {

    private final RequestStates states = new RequestStates();

    @Test
    void aRequestIsQueuedWhenTakenCallingOnceACallLeftAndGoneWhenItEnds() {
        assertThat(states.of("r-1")).isEmpty();

        states.held("r-1");
        assertThat(states.of("r-1")).contains(State.QUEUED);

        states.calling("r-1");
        states.calling("r-1");
        assertThat(states.of("r-1")).contains(State.CALLING);

        states.ended("r-1");
        assertThat(states.of("r-1")).isEmpty();
        assertThat(states.size()).isZero();
    }

    @Test
    void aCallOfARequestNotHeldAddsNothing() {
        states.calling("r-2");

        assertThat(states.of("r-2")).isEmpty();
        assertThat(states.size()).isZero();
    }

    @Test
    void aRequestTakenAgainAfterItEndedStartsQueued() {
        states.held("r-3");
        states.calling("r-3");
        states.ended("r-3");
        states.ended("r-3");

        states.held("r-3");

        assertThat(states.of("r-3")).contains(State.QUEUED);
    }

    @Test
    void aRequestReadAheadReadsQueuedUntilEveryCopyWaitingHadItsTurnAndItsCallsShowOnceInProgress() {
        String id = "r-4";
        // Two copies of one id read ahead (a producer sent it twice): the first has its turn, calls and ends while the
        // second still waits for its turn; then the second has its turn (and a stray admission changes nothing).
        List<Runnable> steps = List.of(
                () -> states.waiting(id),
                () -> states.waiting(id),
                () -> states.admitted(id),
                () -> states.held(id),
                () -> states.calling(id),
                () -> states.ended(id),
                () -> states.admitted(id),
                () -> states.admitted(id));
        List<Optional<State>> expected = List.of(
                Optional.of(State.QUEUED),
                Optional.of(State.QUEUED),
                Optional.of(State.QUEUED),
                Optional.of(State.QUEUED),
                Optional.of(State.CALLING),
                Optional.of(State.QUEUED),
                Optional.empty(),
                Optional.empty());

        for (int step = 0; step < steps.size(); step++) {
            steps.get(step).run();
            assertThat(states.of(id)).as("after step %d", step + 1).isEqualTo(expected.get(step));
        }
    }

    @Test
    void holdsOnlyTheRequestsNotEnded() {
        IntStream.range(0, 10_000).forEach(i -> states.held("r-" + i));
        IntStream.range(0, 10_000).filter(i -> i % 3 == 0).forEach(i -> states.calling("r-" + i));
        IntStream.range(0, 10_000).filter(i -> i != 7).forEach(i -> states.ended("r-" + i));

        assertThat(states.size()).isEqualTo(1);
        assertThat(states.of("r-7")).contains(State.QUEUED);
    }

    @Test
    void theLastRequestsParkedAreRememberedCountedFromTheirLastPark() {
        states.parked("first");
        states.parked("again");
        // Two more than it keeps: the two parked longest ago are forgotten.
        for (int i = 0; i < RequestStates.PARKED_KEPT; i++) {
            if (i == RequestStates.PARKED_KEPT / 2) {
                states.parked("again");
            }
            states.parked("p-" + i);
        }

        assertThat(states.parkedHere("first"))
                .as("parked longest ago: forgotten")
                .isFalse();
        assertThat(states.parkedHere("again")).as("parked again since").isTrue();
        assertThat(states.parkedHere("p-0")).as("the next one").isFalse();
        assertThat(states.parkedHere("p-1")).isTrue();
        assertThat(states.of("again")).contains(State.QUEUED);
    }
}
