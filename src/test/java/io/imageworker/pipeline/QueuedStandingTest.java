package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.api.RequestStates;
import io.imageworker.memory.MemoryBudget;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Where a queued request stands (issue #32), on the real broker, in a worker of its own (no call has left it before
 * the test): a producer's backlog waits behind a gateway whose calls cannot leave (the test holds the whole memory
 * budget, which each call waits for in its slot before it is sent), so every request reads {@code queued} with its
 * position among the producer's waiting requests and no estimate, saying why; once some calls have left and the
 * backlog is held again, the requests still waiting read the same positions with estimates, later for later ones.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(QueuedStandingTest.OwnWorker.class)
class QueuedStandingTest extends PipelineTestSupport {

    static final String TOPIC = "image-request-queued-standing";

    /** The backlog: more than the worker's 4 call slots and 8 places in progress. */
    static final int BACKLOG = 24;

    /**
     * The tests' servers and settings, with request topics (both lanes) and a group of their own, and so a worker of
     * its own ({@link ProducerCapResource}: the tests' shared priority topic holds the priority requests of the tests
     * before, and one of them standing in the priority line while the shares are read gave the normal lane its least
     * share, 0.2, instead of the whole, 1.0).
     */
    public static class OwnWorker extends ProducerCapResource {
        public OwnWorker() {
            super(TOPIC, "queued-standing", Map.of());
        }
    }

    @TestHTTPResource("/")
    URI root;

    @Inject
    MemoryBudget memory;

    @Inject
    RequestStates states;

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private JsonNode status(String requestId) {
        try {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(root.resolve("requests/" + requestId))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The memory budget held whole: a call waits for it in its slot and does not leave. */
    private MemoryBudget.Lease holdTheMemoryBudget() {
        MemoryBudget.Lease lease = memory.lease(MemoryBudget.Kind.CALL);
        lease.hold(memory.budget());
        return lease;
    }

    @Test
    void aBacklogReadsItsPositionsWithoutAnEstimateUntilCallsLeaveThenWithLaterEstimatesForLaterPositions() {
        // The worker owns its partitions before anything is sent (no warm-up request: its call would give a rate).
        await().atMost(WITHIN)
                .until(() -> states.owned().map(owned -> owned.owned() > 0).orElse(false));
        gateway.control().setLatency(Duration.ofMillis(200));
        MemoryBudget.Lease held = holdTheMemoryBudget();
        List<String> ids = sendRequests(TOPIC, BACKLOG, "standing", "\"producer\":\"p\"");

        // Every request taken, none called: 4 in their slots waiting for memory, the others in line behind them.
        await().atMost(WITHIN)
                .until(() -> memory.waiters() == 4
                        && ids.stream().allMatch(id -> status(id).path("queue").has("position")));
        Set<Long> positions = new HashSet<>();
        for (String id : ids) {
            JsonNode status = status(id);
            assertThat(status.path("status").asText()).as(id).isEqualTo("queued");
            JsonNode queue = status.path("queue");
            positions.add(queue.path("position").asLong());
            assertThat(queue.has("callExpectedAt"))
                    .as("%s before any call left: %s", id, status)
                    .isFalse();
            assertThat(queue.path("noEstimate").asText()).isEqualTo("NO_RECENT_CALLS");
        }
        assertThat(positions).hasSize(BACKLOG).allSatisfy(position -> assertThat(position)
                .isBetween(1L, (long) BACKLOG));
        assertThat(ids).allSatisfy(id -> assertThat(callsFor(id)).isEmpty());

        // Some calls leave, then the backlog is held again: the ones still waiting stand still while they are read.
        held.close();
        await().atMost(WITHIN)
                .until(() -> ids.stream().filter(id -> !callsFor(id).isEmpty()).count() >= 8);
        held = holdTheMemoryBudget();
        await().atMost(WITHIN).until(() -> memory.waiters() == 4 && gateway.imageCallsInFlight() == 0);
        List<String> waiting = ids.stream()
                .filter(id -> status(id).path("status").asText().equals("queued"))
                .sorted(Comparator.comparingLong(
                        id -> status(id).path("queue").path("position").asLong()))
                .toList();
        assertThat(waiting).hasSizeGreaterThan(4);

        List<Long> inOrder = new ArrayList<>();
        Instant previous = Instant.MIN;
        for (String id : waiting) {
            JsonNode queue = status(id).path("queue");
            inOrder.add(queue.path("position").asLong());
            assertThat(queue.path("callsPerSecond").asDouble()).as("%s", queue).isPositive();
            assertThat(queue.path("share").asDouble()).isEqualTo(1.0);
            Instant expected = Instant.parse(queue.path("callExpectedAt").asText());
            assertThat(expected)
                    .as("position %s: %s", queue.path("position"), queue)
                    .isAfter(previous);
            previous = expected;
        }
        assertThat(inOrder)
                .as("the positions of the requests still waiting, 1 for the next")
                .startsWith(1L)
                .isSorted()
                .doesNotHaveDuplicates();

        held.close();
        ids.forEach(id ->
                assertThat(body(result(id)).path("image").isObject()).as(id).isTrue());
    }
}
