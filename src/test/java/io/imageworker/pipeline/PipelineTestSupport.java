package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.testing.KafkaTestClient;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.RecordedCall;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** What every pipeline test needs: a producer and result consumer on the real broker, and the simulator. */
abstract class PipelineTestSupport {

    static final ObjectMapper JSON = new ObjectMapper();
    static final Duration WITHIN = Duration.ofSeconds(30);

    static KafkaTestClient kafka;

    final GatewaySimulator gateway = WorkerTestResource.simulator();

    @BeforeAll
    static void connect() {
        kafka = KafkaTestClient.forDefaultTopics();
    }

    @AfterAll
    static void disconnect() {
        kafka.close();
    }

    @BeforeEach
    void resetGateway() {
        gateway.reset();
    }

    /** A fresh request id, so tests sharing one broker and one simulator never see each other's records. */
    static String newId(String name) {
        return name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A minimal generate request whose prompt carries its id, so the simulator's record can be attributed. */
    static String request(String requestId, String extraFields) {
        return "{\"requestId\":\"" + requestId + "\",\"prompt\":\"a red bicycle on white, " + requestId + "\""
                + (extraFields.isEmpty() ? "" : "," + extraFields) + "}";
    }

    void send(String json) {
        kafka.send(WorkerTestResource.REQUESTS, json);
    }

    /**
     * Sends {@code count} generate requests with {@code extraFields}, each with a new id named {@code name}
     * ({@link #newId}); returns their ids in the order sent.
     */
    List<String> sendRequests(int count, String name, String extraFields) {
        return sendRequests(WorkerTestResource.REQUESTS, count, name, extraFields);
    }

    /** {@link #sendRequests(int, String, String)} to {@code topic}. */
    static List<String> sendRequests(String topic, int count, String name, String extraFields) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String id = newId(name);
            ids.add(id);
            kafka.send(topic, request(id, extraFields));
        }
        return ids;
    }

    /**
     * {@code count} requests of producer {@code producer} to {@code topic}, each keyed by its id, so that they spread
     * over partitions.
     */
    static List<String> sendKeyed(String topic, int count, String producer) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String id = newId(producer);
            ids.add(id);
            kafka.send(topic, id, request(id, "\"producer\":\"" + producer + "\""), Map.of());
        }
        return ids;
    }

    /**
     * Sends a request to {@code topic} and waits for its result: the worker's consumer of that topic then has its
     * partitions (a worker just started may still be joining the group).
     */
    static void awaitConsumerOf(String topic) {
        String first = newId("warm");
        kafka.send(topic, request(first, ""));
        result(first);
    }

    /** Sends a generate request with {@code extraFields} and returns the body of its first terminal event. */
    JsonNode ended(String requestId, String extraFields) {
        send(request(requestId, extraFields));
        return body(result(requestId));
    }

    /**
     * Sends {@code json} keyed by {@code key}, in the trace {@code traceId}: its {@code traceparent} names the
     * producer's span {@code parentSpan}.
     */
    static void sendInTrace(String key, String json, String traceId, String parentSpan) {
        kafka.send(
                WorkerTestResource.REQUESTS,
                key,
                json,
                Map.of("traceparent", "00-" + traceId + "-" + parentSpan + "-01"));
    }

    /** Checks that the call sent the contract's fields with these values, and none it forbids. */
    static void assertSentFields(RecordedCall call, String size, String quality) {
        assertThat(call.textFields())
                .containsEntry("model", WorkerTestResource.MODEL)
                .containsEntry("size", size)
                .containsEntry("quality", quality)
                .doesNotContainKeys("n", "moderation");
        assertThat(call.forbiddenFields()).isEmpty();
    }

    /** The first terminal event of a request, waiting for it. */
    static ConsumerRecord<byte[], byte[]> result(String requestId) {
        return kafka.awaitResult(requestId, WITHIN);
    }

    static JsonNode body(ConsumerRecord<byte[], byte[]> record) {
        try {
            return JSON.readTree(record.value());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The image calls the simulator recorded for a request. */
    List<RecordedCall> callsFor(String requestId) {
        return gateway.imageCalls().stream()
                .filter(call -> String.valueOf(call.textFields().get("prompt")).contains(requestId))
                .toList();
    }

    /** When the gateway received the first call of each of {@code requestIds}, in their order. */
    List<Instant> firstCallArrivals(List<String> requestIds) {
        return requestIds.stream()
                .map(id -> callsFor(id).get(0))
                .map(RecordedCall::arrivedAt)
                .toList();
    }
}
