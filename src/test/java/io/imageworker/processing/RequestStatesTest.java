package io.imageworker.processing;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.processing.RequestStates.State;
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
        // Two copies of one id read ahead (a producer sent it twice).
        states.waiting("r-4");
        states.waiting("r-4");
        assertThat(states.of("r-4")).contains(State.QUEUED);

        states.admitted("r-4");
        assertThat(states.of("r-4")).contains(State.QUEUED);
        states.held("r-4");
        states.calling("r-4");
        assertThat(states.of("r-4")).contains(State.CALLING);

        states.ended("r-4");
        assertThat(states.of("r-4")).contains(State.QUEUED);
        states.admitted("r-4");
        assertThat(states.of("r-4")).isEmpty();
        states.admitted("r-4");
        assertThat(states.of("r-4")).isEmpty();
    }

    @Test
    void holdsOnlyTheRequestsNotEnded() {
        IntStream.range(0, 10_000).forEach(i -> states.held("r-" + i));
        IntStream.range(0, 10_000).filter(i -> i % 3 == 0).forEach(i -> states.calling("r-" + i));
        IntStream.range(0, 10_000).filter(i -> i != 7).forEach(i -> states.ended("r-" + i));

        assertThat(states.size()).isEqualTo(1);
        assertThat(states.of("r-7")).contains(State.QUEUED);
    }
}
