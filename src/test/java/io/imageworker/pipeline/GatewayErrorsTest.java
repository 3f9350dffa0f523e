package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.gateway.ConcurrencyLimiter;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.Fault;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/** Each class of gateway answer ends as the error code of the contract, with the billing it really had. */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class GatewayErrorsTest extends PipelineTestSupport {

    @Inject
    ConcurrencyLimiter limiter;

    private JsonNode failedWith(String expectedCode) {
        String id = newId(expectedCode.toLowerCase());
        JsonNode event = ended(id, "");
        assertThat(event.path("error").path("code").asText()).isEqualTo(expectedCode);
        return event;
    }

    @Test
    void aModerationRefusalIsRejectedAndBilledAndNeverRetried() {
        gateway.control().injectFault(Fault.moderationRefusal());

        JsonNode event = failedWith("REJECTED");

        assertThat(event.path("error").path("gatewayStatus").asInt()).isEqualTo(400);
        assertThat(event.path("error").path("gatewayBody").asText()).contains("moderation_blocked");
        assertThat(event.path("error").path("retryable").asBoolean()).isFalse();
        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":1,\"billed\":1,\"unknown\":0}");
        assertThat(event.path("attempts").asInt()).isEqualTo(1);
    }

    @Test
    void aRateLimitThatPersistsEndsAsRateLimitedAndIsNotBilled() {
        gateway.control().injectFault(Fault.rateLimited(), 6);

        JsonNode event = failedWith("RATE_LIMITED");

        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":6,\"billed\":0,\"unknown\":0}");
        assertThat(event.path("error").path("gatewayStatus").asInt()).isEqualTo(429);
    }

    @jakarta.inject.Inject
    io.imageworker.processing.RequestProcessor processor;

    @Test
    void rateLimitingHalvesTheWorkersOwnLimitAndSuccessesRaiseItAgain() {
        // Successes raise the limit back to the ceiling (4): one step per 'limit' successes in a row.
        for (int i = 0; i < 10; i++) {
            String warm = newId("warm");
            send(request(warm, ""));
            result(warm);
        }
        assertThat(limiter.limit()).isEqualTo(4);

        gateway.control().injectFault(Fault.rateLimited(2));
        String id = newId("aimd");
        send(request(id, ""));

        // While the request waits out Retry-After, the worker's own limit is halved.
        org.awaitility.Awaitility.await()
                .atMost(java.time.Duration.ofSeconds(5))
                .until(() -> limiter.limit() == 2);
        assertThat(body(result(id)).path("billing").path("calls").asInt()).isEqualTo(2);
    }

    @Test
    void retriesAfterRetryAfterAndSucceeds() {
        gateway.control().injectFault(Fault.rateLimited(1));
        String id = newId("retryafter");
        JsonNode event = ended(id, "");

        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":2,\"billed\":1,\"unknown\":0}");
        var calls = callsFor(id);
        assertThat(calls).hasSize(2);
        assertThat(java.time.Duration.between(
                        calls.get(0).finishedAt(), calls.get(1).arrivedAt()))
                .isGreaterThanOrEqualTo(java.time.Duration.ofMillis(900));
    }

    @Test
    void aServerErrorIsRetriedOnceThenEndsAsUpstreamErrorOfUnknownBilling() {
        gateway.control().injectFault(Fault.serverError(500), 2);

        JsonNode event = failedWith("UPSTREAM_ERROR");

        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":2,\"billed\":0,\"unknown\":2}");
        assertThat(event.path("error").path("gatewayStatus").asInt()).isEqualTo(500);
    }

    @Test
    void aServerErrorOnceIsRetriedAndCompletes() {
        gateway.control().injectFault(Fault.serverError(502));
        String id = newId("once");
        JsonNode event = ended(id, "");

        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":2,\"billed\":1,\"unknown\":1}");
        assertThat(event.path("attempts").asInt()).isEqualTo(2);
    }

    @Test
    void aHungCallEndsAsTimeoutWithinTheConfiguredTime() {
        gateway.control().injectFault(Fault.hang(), 2);

        JsonNode event = failedWith("TIMEOUT");

        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":2,\"billed\":0,\"unknown\":2}");
    }

    @Test
    void aProxyTimeoutPageIsATimeoutOfUnknownBilling() {
        gateway.control().injectFault(Fault.proxyHtml(524, java.time.Duration.ZERO), 2);

        JsonNode event = failedWith("TIMEOUT");

        assertThat(event.path("billing").path("unknown").asInt()).isEqualTo(2);
        assertThat(event.path("error").path("gatewayStatus").asInt()).isEqualTo(524);
    }

    @Test
    void aTruncatedAnswerIsAnUpstreamErrorOfUnknownBilling() {
        gateway.control().injectFault(Fault.truncatedBody(), 2);

        JsonNode event = failedWith("UPSTREAM_ERROR");

        assertThat(event.path("billing").path("unknown").asInt()).isEqualTo(2);
    }

    @Test
    void bytesThatAreNoImageAreInvalidOutput() {
        gateway.control().injectFault(Fault.nonImageBytes());

        JsonNode event = failedWith("INVALID_OUTPUT");

        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":1,\"billed\":1,\"unknown\":0}");
    }

    @Test
    void invalidBase64IsInvalidOutput() {
        gateway.control().injectFault(Fault.badBase64());

        failedWith("INVALID_OUTPUT");
    }

    @Test
    void anUnknownModelIsRejectedWithoutRetry() {
        gateway.control()
                .injectFault(Fault.status(
                        503, "{\"error\":{\"code\":\"model_not_found\",\"message\":\"No available channel\"}}"));

        JsonNode event = failedWith("REJECTED");

        assertThat(event.path("error").path("message").asText()).contains("IMAGE_WORKER_GATEWAY_MODEL");
        assertThat(event.path("attempts").asInt()).isEqualTo(1);
    }
}
