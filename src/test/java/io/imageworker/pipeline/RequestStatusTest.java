package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.api.RequestStates;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.Fault;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * {@code GET /requests/{requestId}} on the real broker and store: a request this worker holds reads {@code queued}
 * until a call of it leaves, then {@code calling}; an ended one reads its recorded event ({@code completed} with the
 * stored image, {@code failed} with the error, a refusal before any call too); an id nobody sent reads
 * {@code unknown} (404); a malformed id is refused (400). The endpoint is described in the OpenAPI document, which points to the AsyncAPI one.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class RequestStatusTest extends PipelineTestSupport {

    @TestHTTPResource("/")
    URI root;

    @Inject
    RequestStates states;

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(root.resolve(path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode status(String requestId) throws IOException, InterruptedException {
        return JSON.readTree(get("requests/" + requestId).body());
    }

    /** Checks that the endpoint reads {@code expected} for {@code requestId}; returns its whole answer. */
    private JsonNode assertStatus(String requestId, String expected) throws IOException, InterruptedException {
        JsonNode status = status(requestId);
        assertThat(status.path("status").asText()).as(requestId).isEqualTo(expected);
        return status;
    }

    @Test
    void anIdNobodySentIsUnknown() throws Exception {
        String id = newId("never");

        HttpResponse<String> response = get("requests/" + id);

        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(response.headers().firstValue("content-type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        JsonNode body = JSON.readTree(response.body());
        assertThat(body.path("requestId").asText()).isEqualTo(id);
        assertThat(body.path("status").asText()).isEqualTo("unknown");
    }

    @Test
    void anUnknownRequestSaysWhetherAnotherReplicaMayHoldIt() throws Exception {
        // The only worker of its group owns every partition of the request topics: no other replica can hold it.
        String id = newId("nowhere");
        await().atMost(WITHIN).untilAsserted(() -> assertThat(
                        status(id).path("replica").path("mayBeHeldElsewhere").asBoolean(true))
                .isFalse());

        JsonNode status = status(id);
        assertThat(status.path("status").asText()).isEqualTo("unknown");
        assertThat(status.path("replica").path("partitionsOwned").asInt())
                .isPositive()
                .isEqualTo(status.path("replica").path("partitionsTotal").asInt());
        assertThat(status.path("note").asText()).contains("no other replica holds the request");
    }

    @Test
    void anIdThatBreaksTheContractsRuleIsRefused() throws Exception {
        for (String malformed : List.of("bad%20id", "a".repeat(129), "semi%3Bcolon")) {
            HttpResponse<String> response = get("requests/" + malformed);

            assertThat(response.statusCode()).as(malformed).isEqualTo(400);
            JsonNode body = JSON.readTree(response.body());
            assertThat(body.path("error").asText()).isEqualTo("INVALID_REQUEST_ID");
            assertThat(body.path("message").asText()).contains("[A-Za-z0-9._:-]");
        }
    }

    @Test
    void aCompletedRequestReadsCompletedWithItsStoredImage() throws Exception {
        String id = newId("done");
        JsonNode event = ended(id, "");

        JsonNode status = assertStatus(id, "completed");

        assertThat(status.path("image").path("key").asText()).isEqualTo("images/" + id + ".png");
        assertThat(status.path("image")).isEqualTo(event.path("image"));
        assertThat(status.path("image").path("sha256").asText()).hasSize(64);
        assertThat(status.path("completedAt").asText())
                .isEqualTo(event.path("timings").path("completedAt").asText());
        assertThat(status.has("images")).isFalse();
        assertThat(states.of(id)).isEmpty();
    }

    @Test
    void aCompletedVariantRequestReadsItsImages() throws Exception {
        String id = newId("variants");
        JsonNode event = ended(id, "\"count\":2");

        JsonNode status = assertStatus(id, "completed");

        assertThat(status.path("images")).isEqualTo(event.path("images"));
        assertThat(status.path("images")).hasSize(2);
        assertThat(status.path("image")).isEqualTo(status.path("images").get(0));
        assertThat(status.path("variants").path("delivered").asInt()).isEqualTo(2);
    }

    @Test
    void aFailedRequestReadsFailedWithItsError() throws Exception {
        gateway.control().injectFault(Fault.moderationRefusal());
        String id = newId("refused");
        JsonNode event = ended(id, "");

        assertReadsFailedWith(id, event, "REJECTED");
    }

    @Test
    void aRequestRefusedBeforeAnyCallReadsFailedAndSentAgainGetsTheSameAnswerWithoutACall() throws Exception {
        String id = newId("blank");
        send("{\"requestId\":\"" + id + "\",\"prompt\":\"   \"}");
        JsonNode event = body(result(id));

        assertReadsFailedWith(id, event, "INVALID_REQUEST");

        // The same requestId is the same request: sent again, now valid, it is answered from its record.
        send(request(id, ""));
        await().atMost(WITHIN).until(() -> kafka.results(id).size() == 2);
        JsonNode again = body(kafka.results(id).get(1));
        assertThat(again.path("error").path("code").asText()).isEqualTo("INVALID_REQUEST");
        assertThat(again.path("billing").path("calls").asInt()).isZero();
        assertThat(callsFor(id)).isEmpty();
    }

    /** {@code event} ended with {@code code}, and the request reads {@code failed} with that error and no image. */
    private void assertReadsFailedWith(String id, JsonNode event, String code) throws Exception {
        assertThat(event.path("error").path("code").asText()).isEqualTo(code);

        JsonNode status = assertStatus(id, "failed");

        assertThat(status.path("error").path("code").asText()).isEqualTo(code);
        assertThat(status.path("error").path("message").asText())
                .isEqualTo(event.path("error").path("message").asText());
        assertThat(status.has("image")).isFalse();
        assertThat(states.of(id)).isEmpty();
    }

    @Test
    void aRequestHeldReadsQueuedUntilItsCallLeavesThenCalling() throws Exception {
        // Slow calls (within the gateway timeout of 4 s): the four slots stay taken while the fifth request waits.
        // Another test's request may hold one of them meanwhile (a request of variants whose calls came late held a
        // slot without a call in flight, twice in full runs): then three of these run and two wait, and either one
        // will do. So the condition is on these requests' own calls, not on the gateway's count in flight.
        // Three calls in may mean a fourth on its way out: a request with no call in when the condition held may have
        // one by its status read. So the waiting one is one that reads queued with no call of it in, before the read
        // and after it.
        gateway.control().setLatency(Duration.ofSeconds(3));
        List<String> ids = sendRequests(5, "held", "");
        AtomicReference<String> queued = new AtomicReference<>();
        await().atMost(WITHIN)
                .until(() -> ids.stream().filter(id -> !callsFor(id).isEmpty()).count() >= 3
                        && readsQueuedWithNoCall(ids, queued));
        String waiting = queued.get();
        String called =
                ids.stream().filter(id -> !callsFor(id).isEmpty()).findFirst().orElseThrow();

        assertStatus(called, "calling");

        await().atMost(WITHIN).until(() -> !callsFor(waiting).isEmpty());
        assertThat(status(waiting).path("status").asText()).isIn("calling", "completed");
        for (String id : ids) {
            assertThat(body(result(id)).path("image").isObject()).as(id).isTrue();
            assertStatus(id, "completed");
            assertThat(states.of(id)).as(id).isEmpty();
        }
    }

    /**
     * Whether one of {@code ids} reads {@code queued} while no call of it has reached the gateway, before its status
     * read nor after it; that one is set in {@code found}.
     */
    private boolean readsQueuedWithNoCall(List<String> ids, AtomicReference<String> found) throws Exception {
        for (String id : ids) {
            if (callsFor(id).isEmpty()
                    && status(id).path("status").asText().equals("queued")
                    && callsFor(id).isEmpty()) {
                found.set(id);
                return true;
            }
        }
        return false;
    }

    @Test
    void theOpenApiDocumentDescribesTheEndpointAndPointsToTheAsyncApiOne() throws Exception {
        HttpResponse<String> response = get("q/openapi?format=json");

        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode document = JSON.readTree(response.body());
        assertThat(document.path("openapi").asText()).as(response.body()).startsWith("3.");
        assertThat(document.path("info").path("description").asText()).contains("/asyncapi/asyncapi.yaml");
        JsonNode operation =
                document.path("paths").path("/requests/{requestId}").path("get");
        List<String> codes = new ArrayList<>();
        operation.path("responses").fieldNames().forEachRemaining(codes::add);
        assertThat(codes).containsExactlyInAnyOrder("200", "400", "401", "404", "429", "500", "503");
        assertThat(document.path("externalDocs").path("url").asText()).isEqualTo("/asyncapi/asyncapi.yaml");
        JsonNode status = document.path("components")
                .path("schemas")
                .path("RequestStatus")
                .path("properties")
                .path("status");
        List<String> states = new ArrayList<>();
        status.path("enum").forEach(value -> states.add(value.asText()));
        assertThat(states).containsExactly("queued", "calling", "completed", "failed", "unknown");
        // Where a queued request stands, and what an unknown one can tell: additive, optional fields.
        JsonNode schemas = document.path("components").path("schemas");
        JsonNode properties = schemas.path("RequestStatus").path("properties");
        assertThat(properties.has("queue") && properties.has("replica") && properties.has("note"))
                .as(properties.toString())
                .isTrue();
        JsonNode queue = schemas.path("QueuePlace");
        assertThat(queue.path("description").asText())
                .contains("twice the gateway's timeout")
                .contains("not a promise");
        assertThat(queue.path("properties").has("callExpectedAt")
                        && queue.path("properties").has("position"))
                .as(queue.toString())
                .isTrue();
        List<String> why = new ArrayList<>();
        queue.path("properties").path("noEstimate").path("enum").forEach(value -> why.add(value.asText()));
        assertThat(why).contains("NO_RECENT_CALLS", "NO_POSITION");
        assertThat(schemas.path("ReplicaView").path("properties").has("mayBeHeldElsewhere"))
                .isTrue();
        assertThat(schemas.path("RequestStatus").path("required").toString())
                .doesNotContain("queue")
                .doesNotContain("replica");
    }
}
