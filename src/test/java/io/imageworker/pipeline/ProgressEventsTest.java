package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.contract.Lane;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.processing.RequestProcessor;
import io.imageworker.testing.KafkaTestClient;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.Fault;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/** {@code image.started} on {@code image-status} (contract v1.1): a hint per attempt, with the request's key and trace. */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class ProgressEventsTest extends PipelineTestSupport {

    @Inject
    RequestProcessor processor;

    @Inject
    FailingCallListener failing;

    @Test
    void publishesImageStartedWithTheRequestsKeyAndTraceWhenTheFirstCallLeaves() {
        String id = newId("started");
        String traceId = "0af7651916cd43dd8448eb211c80319c";
        sendInTrace("key-" + id, request(id, "\"metadata\":{\"page\":\"p-7\"}"), traceId, "b7ad6b7169203331");

        JsonNode completed = body(result(id));
        ConsumerRecord<byte[], byte[]> record = started(id, 1).get(0);
        JsonNode event = body(record);

        assertThat(record.topic()).isEqualTo(WorkerTestResource.STATUS);
        assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo("key-" + id);
        assertThat(KafkaTestClient.header(record, "ce_type")).isEqualTo("image.started");
        assertThat(KafkaTestClient.header(record, "traceparent")).startsWith("00-" + traceId + "-");
        assertThat(event.path("requestId").asText()).isEqualTo(id);
        assertThat(event.path("operation").asText()).isEqualTo("generate");
        assertThat(event.path("attempt").asInt()).isEqualTo(1);
        assertThat(event.has("variant")).isFalse();
        assertThat(event.path("queuedMs").asLong()).isNotNegative();
        assertThat(event.path("metadata").toString()).isEqualTo("{\"page\":\"p-7\"}");
        assertThat(event.has("producer"))
                .as("a request naming no producer: none, as on its result")
                .isFalse();
        Instant startedAt = Instant.parse(event.path("startedAt").asText());
        assertThat(startedAt)
                .isAfterOrEqualTo(Instant.parse(
                        completed.path("timings").path("startedAt").asText()))
                .isBeforeOrEqualTo(Instant.parse(
                        completed.path("timings").path("completedAt").asText()));
    }

    @Test
    void publishesOneEventPerAttemptWhicheverVariantsCallLeavesFirst() {
        gateway.control().injectFault(Fault.rateLimited());
        String id = newId("attempts");
        send(request(id, "\"count\":3,\"producer\":\"catalogue\""));

        result(id);

        // Three variants' first calls make one event; the call that met the 429 was tried again: a second attempt.
        List<ConsumerRecord<byte[], byte[]>> events = started(id, 2);
        assertThat(events.stream().map(record -> body(record).path("attempt").asInt()))
                .containsExactlyInAnyOrder(1, 2);
        assertThat(events)
                .allSatisfy(record ->
                        assertThat(body(record).path("variant").asInt()).isBetween(1, 3));
        assertThat(events)
                .as("the producer the request named, as its result echoes it")
                .allSatisfy(record ->
                        assertThat(body(record).path("producer").asText()).isEqualTo("catalogue"));
        assertThat(callsFor(id)).hasSize(4);
    }

    @Test
    void aProgressListenerThatFailsNeitherFailsNorStopsTheRequest() throws Exception {
        String id = newId("listener");
        failing.failFor(id);

        TerminalEvent event = processor
                .process(id, JSON.readTree(request(id, "")), Instant.now(), Lane.NORMAL)
                .await()
                .atMost(WITHIN);

        assertThat(event).isInstanceOf(TerminalEvent.Completed.class);
        assertThat(failing.failedFor(id))
                .as("the listener was told of the call, and threw")
                .isTrue();
        assertThat(callsFor(id)).hasSize(1);
    }

    /** The request's image.started events, once there are {@code count} of them. */
    private static List<ConsumerRecord<byte[], byte[]>> started(String id, int count) {
        await().atMost(WITHIN).until(() -> kafka.statusEvents(id).size() >= count);
        List<ConsumerRecord<byte[], byte[]>> events = kafka.statusEvents(id);
        assertThat(events).hasSize(count);
        return events;
    }
}
