package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.contract.Lane;
import io.imageworker.gateway.ConcurrencyLimiter;
import io.imageworker.testing.WorkerTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The priority lane on the real broker, with the normal lane saturated: its four call slots taken, four more of its
 * requests waiting for a slot, its intake paused by backpressure and the rest of its backlog in Kafka. A priority
 * request is read by a consumer of its own (without it, it would wait behind the whole backlog), and gets the next free
 * slot (without the limiter's preference, it would wait behind the four requests already waiting for one).
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class PriorityLaneTest extends PipelineTestSupport {

    private static final int NORMAL = 16;

    @Inject
    ConcurrencyLimiter limiter;

    @Test
    void aPriorityRequestOvertakesTheNormalBacklogAndTheNormalCallsWaitingForASlot() {
        awaitConsumerOf(WorkerTestResource.PRIORITY_REQUESTS);
        // The first round's four calls wait at the simulator's gate until the priority request waits for a slot too;
        // then the round ends at once and frees the four slots together. (With calls of a fixed 1 s, a loaded machine
        // once read the priority request after the round had ended: two normal calls went first.)
        gateway.control().setLatency(Duration.ofMillis(200)).closeGate();
        List<String> normal = sendRequests(NORMAL, "normal", "");
        String urgent = newId("urgent");
        Instant sent;
        try {
            await().atMost(WITHIN).until(() -> gateway.imageCallsInFlight() == 4 && limiter.waiting() == 4);
            sent = Instant.now();
            kafka.send(WorkerTestResource.PRIORITY_REQUESTS, request(urgent, ""));
            await().atMost(WITHIN).until(() -> limiter.waiting(Lane.PRIORITY) == 1);
        } finally {
            gateway.control().openGate();
        }

        assertThat(body(result(urgent)).path("image").path("key").asText()).isEqualTo("images/" + urgent + ".png");
        Instant urgentCalled = callsFor(urgent).get(0).arrivedAt();
        normal.forEach(PipelineTestSupport::result);
        List<Instant> normalCalled = firstCallArrivals(normal);
        long calledMeanwhile = normalCalled.stream()
                .filter(arrived -> arrived.isAfter(sent) && arrived.isBefore(urgentCalled))
                .count();
        long calledAfter = normalCalled.stream()
                .filter(arrived -> arrived.isAfter(urgentCalled))
                .count();
        String waited = "the priority request waited "
                + Duration.between(sent, urgentCalled).toMillis() + " ms";
        // The round frees its four slots together: the priority request takes the first, the three others go to
        // normal calls in the same instant, and calls that leave together reach the simulator in any order (under
        // load, two of them came in before the priority call). Behind the normal calls waiting for a slot, it would
        // come after those four at least.
        assertThat(calledMeanwhile).as(waited).isLessThanOrEqualTo(3);
        assertThat(calledAfter).as(waited).isGreaterThanOrEqualTo(NORMAL - 8);
    }
}
