package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.testing.WorkerTestResource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Keep-alive connections to the gateway: a server closes one it finds idle (Node.js after 5 s), and a call the worker
 * sends on such a connection while it closes is never read. It must cost nothing and fail nothing.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class KeepAliveTest extends PipelineTestSupport {

    private static final Duration SERVER_IDLE_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration NODE_IDLE_TIMEOUT = Duration.ofSeconds(5);

    @Inject
    MeterRegistry registry;

    private double staleRetries() {
        Counter counter =
                registry.find("image_worker_gateway_stale_connection_retries").counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void aCallOnAConnectionTheGatewayClosedAsIdleIsSentAgainAtNoCostAndCompletes() {
        gateway.control().update(s -> s.withStaleAfter(SERVER_IDLE_TIMEOUT));
        String first = newId("keepalive-first");
        send(request(first, ""));
        assertThat(body(result(first)).has("image")).isTrue();
        // The worker keeps idle connections for 4 s; this gateway takes them as closed after 1 s.
        await().atMost(Duration.ofSeconds(3))
                .until(() -> gateway.openConnections() > 0
                        && gateway.idleConnections(SERVER_IDLE_TIMEOUT) == gateway.openConnections());
        double retriesBefore = staleRetries();

        String second = newId("keepalive-second");
        send(request(second, ""));
        JsonNode event = body(result(second));

        assertThat(event.has("image")).as("completed: %s", event).isTrue();
        assertThat(gateway.staleDrops()).isGreaterThanOrEqualTo(1);
        assertThat(staleRetries()).isGreaterThan(retriesBefore);
        // The dropped call never reached the gateway's handler: one call, one attempt, one bill.
        assertThat(callsFor(second)).hasSize(1);
        assertThat(event.path("attempts").asInt()).isEqualTo(1);
        assertThat(event.path("billing").path("calls").asInt()).isEqualTo(1);
        assertThat(event.path("billing").path("billed").asInt()).isEqualTo(1);
    }

    @Test
    void theWorkerClosesIdleConnectionsBeforeANodeServerWould() {
        String id = newId("keepalive-idle");
        send(request(id, ""));
        result(id);

        // IMAGE_WORKER_GATEWAY_KEEP_ALIVE_TIMEOUT is 4 s by default: the worker closes first, Node.js would at 5 s.
        // Measured as the server sees it (idle time at close), so a slow machine's delays do not decide the outcome.
        await().atMost(Duration.ofSeconds(15)).until(() -> gateway.openConnections() == 0);
        assertThat(gateway.idleTimesAtClose()).isNotEmpty().allSatisfy(idle -> assertThat(idle)
                .isLessThan(NODE_IDLE_TIMEOUT));
    }
}
