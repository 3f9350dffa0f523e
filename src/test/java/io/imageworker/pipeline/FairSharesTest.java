package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.contract.Lane;
import io.imageworker.messaging.intake.Admission;
import io.imageworker.testing.WorkerTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Fair shares (contract v1.2) on the real broker: producer A publishes a backlog, then producer B a few requests, all
 * on the normal lane. B's records sit in the partitions behind A's; the worker (4 call slots, 8 requests in progress)
 * reads ahead past A's backlog, takes requests into progress and gives call slots in turns between the producers with
 * waiting work, so B's requests are called within a few rounds instead of after A's whole backlog.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class FairSharesTest extends PipelineTestSupport {

    /** A's backlog: 15 rounds of the worker's 4 call slots. */
    private static final int BACKLOG = 60;

    private static final int OF_B = 4;

    @Inject
    Admission intake;

    @Test
    void aProducersRequestsPublishedAfterAnothersBacklogAreCalledBeforeThatBacklogIsDone() {
        awaitConsumerOf(WorkerTestResource.REQUESTS);
        // Each call takes a while (the backlog lasts 15 rounds), so that the time B's records take to be read (tens of
        // milliseconds) is small beside a round. Half a second is plenty: the margin of the assertions below is counted
        // in calls, not in seconds (with 1 s, until November 2026, the test took 7 s longer and proved no more).
        gateway.control().setLatency(Duration.ofMillis(500));
        List<String> ofA = sendRequests(BACKLOG, "a", "\"producer\":\"a\"");
        // The backlog is read: A's requests wait for their turn (read ahead) or for a slot.
        await().atMost(WITHIN).until(() -> intake.waiting(Lane.NORMAL) > 0);
        List<String> ofB = sendRequests(OF_B, "b", "\"producer\":\"b\"");

        ofB.forEach(id -> assertThat(body(result(id)).path("producer").asText()).isEqualTo("b"));
        ofA.forEach(PipelineTestSupport::result);

        Instant lastOfB =
                firstCallArrivals(ofB).stream().max(Comparator.naturalOrder()).orElseThrow();
        List<Instant> callsOfA = firstCallArrivals(ofA);
        long calledBefore =
                callsOfA.stream().filter(arrived -> arrived.isBefore(lastOfB)).count();
        // First come first served, B's calls would come after all 60 of A's. In turns, B's records go into progress
        // among the next ones that free up (A's 8 in progress end in two rounds) and get every other free slot: B's
        // last
        // call comes in about the fourth round after B's records are read, after some 12 to 16 of A's calls.
        assertThat(calledBefore)
                .as("calls of A's backlog made before B's last call")
                .isLessThanOrEqualTo(BACKLOG / 2);
        assertThat(callsOfA.stream().filter(arrived -> arrived.isAfter(lastOfB)).count())
                .isGreaterThanOrEqualTo(BACKLOG / 2);
    }
}
