package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
        // All four calls of a round end together: a round frees the four slots at once.
        gateway.control().setLatency(Duration.ofSeconds(1));
        List<String> normal = sendRequests(NORMAL, "normal", "");
        await().atMost(WITHIN).until(() -> gateway.imageCallsInFlight() == 4 && limiter.waiting() == 4);
        String urgent = newId("urgent");
        Instant sent = Instant.now();
        kafka.send(WorkerTestResource.PRIORITY_REQUESTS, request(urgent, ""));

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
        assertThat(calledMeanwhile).as(waited).isLessThanOrEqualTo(1);
        assertThat(calledAfter).as(waited).isGreaterThanOrEqualTo(NORMAL - 8);
    }
}
