package io.imageworker.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.api.RequestStates.State;
import io.imageworker.contract.ImageStarted;
import io.imageworker.contract.Lane;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Pauses;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The requests a worker holds, as the status read model tells them from the registry of what is in progress and the
 * events it hears: queued when taken, calling once a call left, gone when ended, however it ended.
 */
class RequestStatesTest {

    private final RequestsInProgress progress = new RequestsInProgress(new Pauses(System::nanoTime));
    private final RequestStates states = new RequestStates(Duration.ofMinutes(1), progress);

    /** What {@code processing.RequestProcessor} tells as a request's story begins. */
    private void begun(String name) {
        progress.begun(name);
    }

    /** What the gateway tells its listeners (the registry and the read model) as a call of {@code name} leaves. */
    private void called(String name) {
        ImageStarted call = new ImageStarted(name, "generate", 1, null, 0, Instant.now(), Map.of(), null);
        progress.sent(call, name);
        states.sent(call, name);
    }

    /** What {@code processing.RequestProcessor} tells as a request's story ends. */
    private void ended(String name) {
        states.ended(name, progress.over(name));
    }

    @Test
    void aRequestIsQueuedWhenTakenCallingOnceACallLeftAndGoneWhenItEnds() {
        assertThat(states.of("r-1")).isEmpty();

        begun("r-1");
        assertThat(states.of("r-1")).contains(State.QUEUED);

        called("r-1");
        called("r-1");
        assertThat(states.of("r-1")).contains(State.CALLING);
        assertThat(states.calling(10)).containsExactly("r-1");

        ended("r-1");
        assertThat(states.of("r-1")).isEmpty();
        assertThat(states.size()).isZero();
    }

    @Test
    void aCallOfARequestNotHeldAddsNothing() {
        called("r-2");

        assertThat(states.of("r-2")).isEmpty();
        assertThat(states.size()).isZero();
    }

    @Test
    void aRequestTakenAgainAfterItEndedStartsQueued() {
        begun("r-3");
        called("r-3");
        ended("r-3");
        ended("r-3");

        begun("r-3");

        assertThat(states.of("r-3")).contains(State.QUEUED);
    }

    @Test
    void aRequestReadAheadReadsQueuedUntilEveryCopyWaitingHadItsTurnAndItsCallsShowOnceInProgress() {
        String id = "r-4";
        // Two copies of one id read ahead (a producer sent it twice): the first has its turn, calls and ends while the
        // second still waits for its turn; then the second has its turn (and a stray admission changes nothing).
        List<Runnable> steps = List.of(
                () -> progress.readAhead(id),
                () -> progress.readAhead(id),
                () -> progress.turnCame(id),
                () -> begun(id),
                () -> called(id),
                () -> ended(id),
                () -> progress.turnCame(id),
                () -> progress.turnCame(id));
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
        IntStream.range(0, 10_000).forEach(i -> begun("r-" + i));
        IntStream.range(0, 10_000).filter(i -> i % 3 == 0).forEach(i -> called("r-" + i));
        IntStream.range(0, 10_000).filter(i -> i != 7).forEach(i -> ended("r-" + i));

        assertThat(states.size()).isEqualTo(1);
        assertThat(states.of("r-7")).contains(State.QUEUED);
    }

    @Test
    void aRequestParkedLatelyReadsQueued() {
        progress.parked("parked");

        assertThat(states.of("parked")).contains(State.QUEUED);
        assertThat(states.parkedHere("parked")).isTrue();
        assertThat(states.of("not parked")).isEmpty();
        assertThat(states.parkedHere("not parked")).isFalse();
    }

    @Test
    void aQueuedRequestStandsInItsLineUntilItsFirstCallLeavesItsWorkEndsOrItLeavesIt() {
        Runnable first = states.queued("a-1", Lane.NORMAL, "a");
        states.queued("a-2", Lane.NORMAL, "a");
        Runnable third = states.queued("a-3", Lane.NORMAL, "a");
        states.queued("a-4", Lane.NORMAL, "a");
        assertThat(states.standing("a-4").orElseThrow().position()).isEqualTo(4);

        first.run();
        first.run();
        assertThat(states.standing("a-1")).isEmpty();
        assertThat(states.standing("a-4").orElseThrow().position()).isEqualTo(3);

        called("a-2");
        assertThat(states.standing("a-2")).as("its call left").isEmpty();
        ended("a-4");
        assertThat(states.standing("a-4")).as("its work ended").isEmpty();
        assertThat(states.standing("a-3").orElseThrow().position()).isEqualTo(1);
        third.run();
        assertThat(states.lines()).isEmpty();
    }

    @Test
    void thePartitionsOwnedAddUpOverTheRequestTopics() {
        assertThat(states.owned()).isEmpty();

        states.partitions("image-request", 2, 6);
        states.partitions("image-request-priority", 1, 3);
        assertThat(states.owned()).contains(new RequestStates.Owned(3, 9));

        states.partitions("image-request-priority", 0, -1);
        assertThat(states.owned()).contains(new RequestStates.Owned(2, -1));
    }
}
