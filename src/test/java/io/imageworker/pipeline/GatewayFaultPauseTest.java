package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.WorkerTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/** A dead token pauses intake instead of failing the backlog, and intake resumes by itself. */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class GatewayFaultPauseTest extends PipelineTestSupport {

    @TestHTTPResource("/q/health/ready")
    URI ready;

    private int readiness() throws Exception {
        return HttpClient.newHttpClient()
                .send(HttpRequest.newBuilder(ready).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    @Test
    void aRevokedTokenPausesIntakeAndEveryRequestCompletesOnceItIsRestored() throws Exception {
        gateway.control().revokeToken();
        List<String> ids = sendRequests(8, "storm", "");

        await().atMost(WITHIN).until(() -> readiness() == 503);
        assertThat(ids).allSatisfy(id -> assertThat(kafka.results(id)).isEmpty());
        int unauthorizedCalls = gateway.imageCalls().size();

        gateway.control().restoreToken();

        ids.forEach(id -> assertThat(result(id).topic()).isEqualTo("image-completed"));
        await().atMost(WITHIN).until(() -> readiness() == 200);
        assertThat(ids).allSatisfy(id -> assertThat(kafka.results(id)).hasSize(1));
        // While paused, only unbillable probes were sent, never an image request.
        assertThat(gateway.imageCalls().size() - unauthorizedCalls).isEqualTo(ids.size());
        assertThat(gateway.calls()).anySatisfy(call -> assertThat(call.path()).isEqualTo("/v1/chat/completions"));
    }
}
