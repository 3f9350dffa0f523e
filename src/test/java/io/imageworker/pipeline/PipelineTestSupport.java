package io.imageworker.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.testing.KafkaTestClient;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.RecordedCall;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
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
}
