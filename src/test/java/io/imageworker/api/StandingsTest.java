package io.imageworker.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.config.ProducerWeights;
import io.imageworker.contract.ImageStarted;
import io.imageworker.contract.Lane;
import io.imageworker.processing.RequestStates;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * What a status answer adds for a request not recorded: a queued request's place and estimate, or why it has none (a
 * paused gateway, a producer over its cap, no call yet, parked); for an unknown one, the partitions this replica owns.
 */
class StandingsTest {

    private final RequestStates states = new RequestStates();
    private final AtomicBoolean paused = new AtomicBoolean();
    private final AtomicBoolean overCap = new AtomicBoolean();
    private final Standings standings =
            new Standings(states, ProducerWeights.parse(""), 0.1, paused::get, producer -> overCap.get());

    private RequestStatus.Queue queue(String requestId) {
        RequestStatus status = standings.held(requestId, RequestStates.State.QUEUED);
        assertThat(status.status()).isEqualTo("queued");
        return status.queue();
    }

    private void callLeaves(String requestId) {
        states.sent(new ImageStarted(requestId, "generate", 1, null, 0, Instant.now(), Map.of(), null));
    }

    @Test
    void aQueuedRequestHasItsPositionAndNoEstimateBeforeAnyCallLeft() {
        states.inLine("a-1", Lane.NORMAL, "a");
        states.inLine("a-2", Lane.NORMAL, "a");

        RequestStatus.Queue second = queue("a-2");

        assertThat(second.position()).isEqualTo(2);
        assertThat(second.callExpectedAt()).isNull();
        assertThat(second.noEstimate()).isEqualTo("NO_RECENT_CALLS");
    }

    @Test
    void onceACallLeftAndOneFinishedTheRequestsBehindItHaveAnEstimate() {
        states.held("a-0");
        callLeaves("a-0");
        states.ended("a-0");
        states.inLine("a-1", Lane.NORMAL, "a");
        states.inLine("a-2", Lane.NORMAL, "a");
        states.inLine("a-3", Lane.NORMAL, "a");

        assertThat(queue("a-1").noEstimate()).isNull();
        states.held("a-1");
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
        states.inLine("a-1", Lane.NORMAL, "a");
        states.inLine("a-2", Lane.NORMAL, "a");
        states.held("a-1");
        callLeaves("a-1");

        assertThat(queue("a-2").noEstimate()).isEqualTo("NO_RECENT_CALLS");
        assertThat(queue("a-2").position()).isEqualTo(1);
    }

    @Test
    void aPausedGatewayOrAProducerOverItsCapLeavesThePositionWithoutAnEstimate() {
        states.held("a-0");
        callLeaves("a-0");
        states.ended("a-0");
        states.inLine("a-1", Lane.NORMAL, "a");
        states.inLine("a-2", Lane.NORMAL, "a");
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
        states.parked("p-1");

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
}
