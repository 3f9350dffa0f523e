package io.imageworker.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.config.ProducerWeights;
import io.imageworker.contract.ImageStarted;
import io.imageworker.contract.Lane;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Pauses;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * What a status answer adds for a request not recorded: a queued request's place and estimate, or why it has none (a
 * paused gateway, a producer over its cap, no call yet, parked); for an unknown one, the partitions this replica owns.
 * Where producers are taken from their topics, a producer's answer rests on its own pace and moves with nothing another
 * producer does.
 */
class StandingsTest {

    private final RequestsInProgress progress = new RequestsInProgress(new Pauses(System::nanoTime));
    private final RequestStates states = new RequestStates(Duration.ofMinutes(1), progress);
    private final AtomicBoolean paused = new AtomicBoolean();
    private final AtomicBoolean overCap = new AtomicBoolean();
    private final Standings standings =
            new Standings(states, ProducerWeights.parse(""), 0.1, paused::get, producer -> overCap.get());

    private RequestStatus.Queue queue(String requestId) {
        RequestStatus status = standings.held(requestId, RequestStates.State.QUEUED);
        assertThat(status.status()).isEqualTo("queued");
        return status.queue();
    }

    /** A call of {@code requestId} leaves, told to the gateway's listeners (the registry and the read model). */
    private void callLeaves(String requestId) {
        ImageStarted call = new ImageStarted(requestId, "generate", 1, null, 0, Instant.now(), Map.of(), null);
        progress.sent(call);
        states.sent(call);
    }

    /** The work of {@code requestId} ends, as {@code processing.RequestProcessor} tells it. */
    private void ended(String requestId) {
        states.ended(requestId, progress.over(requestId));
    }

    @Test
    void aQueuedRequestHasItsPositionAndNoEstimateBeforeAnyCallLeft() {
        states.queued("a-1", Lane.NORMAL, "a");
        states.queued("a-2", Lane.NORMAL, "a");

        RequestStatus.Queue second = queue("a-2");

        assertThat(second.position()).isEqualTo(2);
        assertThat(second.callExpectedAt()).isNull();
        assertThat(second.noEstimate()).isEqualTo("NO_RECENT_CALLS");
    }

    @Test
    void onceACallLeftAndOneFinishedTheRequestsBehindItHaveAnEstimate() {
        progress.begun("a-0");
        callLeaves("a-0");
        ended("a-0");
        states.queued("a-1", Lane.NORMAL, "a");
        states.queued("a-2", Lane.NORMAL, "a");
        states.queued("a-3", Lane.NORMAL, "a");

        assertThat(queue("a-1").noEstimate()).isNull();
        progress.begun("a-1");
        callLeaves("a-1");

        RequestStatus.Queue second = queue("a-2");
        RequestStatus.Queue third = queue("a-3");
        assertThat(second.position()).isEqualTo(1);
        assertThat(third.position()).isEqualTo(2);
        assertThat(second.callExpectedAt()).isNotNull();
        assertThat(third.callExpectedAt()).isAfter(second.callExpectedAt());
        assertThat(standings.held("a-1", RequestStates.State.CALLING).queue()).isNull();
    }

    @Test
    void aCallThatLeftWithoutAnyFinishedGivesNoRateYet() {
        states.queued("a-1", Lane.NORMAL, "a");
        states.queued("a-2", Lane.NORMAL, "a");
        progress.begun("a-1");
        callLeaves("a-1");

        assertThat(queue("a-2").noEstimate()).isEqualTo("NO_RECENT_CALLS");
        assertThat(queue("a-2").position()).isEqualTo(1);
    }

    @Test
    void aPausedGatewayOrAProducerOverItsCapLeavesThePositionWithoutAnEstimate() {
        progress.begun("a-0");
        callLeaves("a-0");
        ended("a-0");
        states.queued("a-1", Lane.NORMAL, "a");
        states.queued("a-2", Lane.NORMAL, "a");
        callLeaves("a-1");

        paused.set(true);
        assertThat(queue("a-2").noEstimate()).isEqualTo("GATEWAY_PAUSED");
        assertThat(queue("a-2").position()).isEqualTo(1);

        paused.set(false);
        overCap.set(true);
        assertThat(queue("a-2").noEstimate()).isEqualTo("PRODUCER_OVER_CAP");
        assertThat(queue("a-2").callExpectedAt()).isNull();
    }

    @Test
    void aParkedRequestIsQueuedWithoutAPositionAndSaysWhy() {
        progress.parked("p-1");

        RequestStatus status = standings.held("p-1", RequestStates.State.QUEUED);

        assertThat(status.queue().position()).isNull();
        assertThat(status.queue().noEstimate()).isEqualTo("NO_POSITION");
        assertThat(status.note()).isEqualTo(Standings.PARKED);
    }

    @Test
    void anUnknownRequestSaysWhetherAnotherReplicaMayHoldIt() {
        assertThat(standings.unknown("x").replica()).isNull();
        assertThat(standings.unknown("x").note()).contains("owns no partition");

        states.partitions("image-request", 2, 6);
        states.partitions("image-request-priority", 0, 2);
        RequestStatus some = standings.unknown("x");
        assertThat(some.status()).isEqualTo("unknown");
        assertThat(some.replica()).isEqualTo(new RequestStatus.Replica(2, 8, true));
        assertThat(some.note()).contains("2 of the 8 partitions").contains("another replica");

        states.partitions("image-request", 6, 6);
        states.partitions("image-request-priority", 2, 2);
        assertThat(standings.unknown("x").replica().mayBeHeldElsewhere()).isFalse();
        assertThat(standings.unknown("x").note()).contains("no other replica holds the request");

        states.partitions("image-request-priority", 2, -1);
        assertThat(standings.unknown("x").replica()).isEqualTo(new RequestStatus.Replica(8, null, true));
    }

    /** Producers a (weight 1) and b (weight 3) taken from their topics, the priority lane on, 4 slots. */
    private final AtomicLong clock = new AtomicLong(1_000_000);

    private final RequestsInProgress topicsProgress =
            new RequestsInProgress(new Pauses(System::nanoTime), true, clock::get);
    private final RequestStates topics =
            new RequestStates(Duration.ofMinutes(1), Set.of("a", "b"), topicsProgress, clock::get);
    private final AtomicReference<String> capped = new AtomicReference<>("");
    private final ProducerWeights weights = ProducerWeights.parse("a=1,b=3");
    private final Standings ofTopics = new Standings(
            topics,
            weights,
            0.25,
            paused::get,
            producer -> producer.equals(capped.get()),
            new Standings.OwnPace(Set.of("a", "b"), true, 4));
    /** The same states answered as declared producers are: the replica's rate and the share of those waiting now. */
    private final Standings declared =
            new Standings(topics, weights, 0.25, paused::get, producer -> producer.equals(capped.get()));

    private static RequestStatus.Queue queue(Standings standings, String name) {
        return standings.held(name, name, RequestStates.State.QUEUED).queue();
    }

    /** {@code name} of {@code producer} stands in its line in {@code lane}, its call leaves, and ends {@code millis} later. */
    private void called(String name, Lane lane, String producer, long millis) {
        topicsProgress.begun(name);
        topics.queued(name, lane, producer);
        ImageStarted call = new ImageStarted(name, "generate", 1, null, 0, Instant.now(), Map.of(), producer);
        topicsProgress.sent(call, name);
        topics.sent(call, name);
        clock.addAndGet(millis);
        topics.ended(name, topicsProgress.over(name));
    }

    @Test
    void inTopicModeAProducersAnswerRestsOnItsOwnCallsAndMovesWithNothingAnotherProducerDoes() {
        called("a/a-0", Lane.NORMAL, "a", 10_000);
        topics.queued("a/a-1", Lane.NORMAL, "a");
        topics.queued("a/a-2", Lane.NORMAL, "a");

        RequestStatus.Queue alone = queue(ofTopics, "a/a-2");
        RequestStatus.Queue declaredAlone = queue(declared, "a/a-2");
        // Its own line was served once in the 10 s since: 2 / 0.1 = 20 s.
        assertThat(alone.position()).isEqualTo(2);
        assertThat(alone.basis()).isEqualTo(QueueEstimate.OWN_CALLS);
        assertThat(alone.callsPerSecond()).isEqualTo(0.1);
        assertThat(alone.callExpectedInSeconds()).isEqualTo(20.0);
        assertThat(alone.share()).isNull();

        // b waits in both lanes, its calls leave (at once: the clock stands still), and it is over its own cap.
        for (int i = 0; i < 5; i++) {
            called("b/b-" + i, Lane.NORMAL, "b", 0);
        }
        topics.queued("b/b-5", Lane.NORMAL, "b");
        topics.queued("b/b-6", Lane.NORMAL, "b");
        topics.queued("b/b-7", Lane.PRIORITY, "b");
        capped.set("b");

        assertThat(queue(ofTopics, "a/a-2"))
                .usingRecursiveComparison()
                .ignoringFields("callExpectedAt")
                .isEqualTo(alone);
        // What a's answer would have told of b as declared producers: its share falls, the replica's rate rises.
        assertThat(queue(declared, "a/a-2"))
                .usingRecursiveComparison()
                .ignoringFields("callExpectedAt")
                .isNotEqualTo(declaredAlone);

        capped.set("a");
        assertThat(queue(ofTopics, "a/a-2").noEstimate()).isEqualTo(QueueEstimate.PRODUCER_OVER_CAP);
    }

    @Test
    void inTopicModeAProducerWithoutACallLatelyGetsItsGuaranteedShareOfTheSlotsWhateverTheOthersCall() {
        called("a/a-0", Lane.NORMAL, "a", 10_000);
        clock.addAndGet(Duration.ofMinutes(2).toMillis());
        for (int i = 0; i < 5; i++) {
            called("b/b-" + i, Lane.NORMAL, "b", 1_000);
        }
        topics.queued("a/a-1", Lane.PRIORITY, "a");
        topics.queued("a/a-2", Lane.NORMAL, "a");

        // Priority: 1 / (1 + 3) x (1 - 0.25) of 4 slots, each held 10 s: 0.075 a second, 13.3 s for position 1.
        RequestStatus.Queue priority = queue(ofTopics, "a/a-1");
        assertThat(priority.basis()).isEqualTo(QueueEstimate.GUARANTEED_SHARE);
        assertThat(priority.callExpectedInSeconds()).isEqualTo(13.3);
        assertThat(priority.share()).isNull();
        // Normal: 1 / 4 x 0.25 of them: 40 s.
        assertThat(queue(ofTopics, "a/a-2").callExpectedInSeconds()).isEqualTo(40.0);
    }

    @Test
    void inTopicModeAProducerWithNoCallOfItsOwnHasNoEstimateHoweverBusyTheReplicaIs() {
        for (int i = 0; i < 5; i++) {
            called("b/b-" + i, Lane.NORMAL, "b", 1_000);
        }
        topics.queued("a/a-1", Lane.NORMAL, "a");

        assertThat(topics.callsPerSecond()).isPresent();
        RequestStatus.Queue first = queue(ofTopics, "a/a-1");
        assertThat(first.position()).isEqualTo(1);
        assertThat(first.noEstimate()).isEqualTo(QueueEstimate.NO_RECENT_CALLS);
        assertThat(first.callsPerSecond()).isNull();
    }
}
