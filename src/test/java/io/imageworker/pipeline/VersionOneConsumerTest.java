package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.storage.ImageStore;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.Fault;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A consumer of contract v1 sees, for a request without {@code count} or with {@code count: 1}, what it saw before
 * contract v1.1: the same key, the same headers, and a payload of the shape of v1's events, frozen as a v1 worker wrote
 * them, every optional field present, in {@code src/test/resources/contract-v1/}: no field more, none moved, none of
 * another JSON type. A result a v1 worker recorded is replayed byte for byte.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class VersionOneConsumerTest extends PipelineTestSupport {

    /** The headers of a v1 result, but for the trace context (present when traces are on, or the request had one). */
    private static final Set<String> V1_HEADERS = Set.of(
            "ce_specversion",
            "ce_id",
            "ce_source",
            "ce_type",
            "ce_subject",
            "ce_time",
            "ce_datacontenttype",
            "content-type");

    @Inject
    ObjectMapper mapper;

    @Inject
    ImageStore store;

    @ParameterizedTest
    @ValueSource(strings = {"", "\"count\":1"})
    void aCompletedEventIsWhatAVersionOneWorkerPublished(String count) throws Exception {
        String id = newId("v1");
        kafka.send(WorkerTestResource.REQUESTS, "key-" + id, request(id, count), Map.of());

        ConsumerRecord<byte[], byte[]> record = result(id);

        assertThat(record.topic()).isEqualTo("image-completed");
        assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo("key-" + id);
        assertThat(headerNames(record)).isEqualTo(V1_HEADERS);
        assertShapedLike(versionOne("completed.json", id), body(record), "");
        assertThat(body(record).path("image").path("key").asText()).isEqualTo("images/" + id + ".png");
        // The result document is the same bytes, and no variant was recorded apart from it.
        assertThat(store.findResult(id).await().atMost(WITHIN)).hasValue(record.value());
        assertThat(store.findVariants(id).await().atMost(WITHIN)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\"count\":1"})
    void aFailedEventIsWhatAVersionOneWorkerPublished(String count) throws Exception {
        gateway.control().injectFault(Fault.moderationRefusal());
        String id = newId("v1failed");
        send(request(id, count.isEmpty() ? "\"size\":\"16:9\"" : count + ",\"size\":\"16:9\""));

        ConsumerRecord<byte[], byte[]> record = result(id);

        assertThat(record.topic()).isEqualTo("image-failed");
        assertThat(headerNames(record)).isEqualTo(V1_HEADERS);
        assertShapedLike(versionOne("failed.json", id), body(record), "");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\"count\":1"})
    void aResultRecordedByAVersionOneWorkerIsReplayedByteForByte(String count) throws Exception {
        String id = newId("v1replay");
        byte[] recorded = mapper.writeValueAsBytes(versionOne("completed.json", id));
        store.putResult(id, recorded).await().atMost(WITHIN);
        send(request(id, count));

        assertThat(result(id).value()).isEqualTo(recorded);
        assertThat(callsFor(id)).isEmpty();
    }

    /** An event of contract v1 as a v1 worker wrote it, for the request {@code requestId}. */
    private static JsonNode versionOne(String file, String requestId) throws IOException {
        try (InputStream in = VersionOneConsumerTest.class.getResourceAsStream("/contract-v1/" + file)) {
            return JSON.readTree(
                    new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("REQUEST_ID", requestId));
        }
    }

    /**
     * Checks that {@code actual} has the shape of {@code sample}: each object only fields the sample has, in the
     * sample's order (a field left out as null is allowed), each value of the sample's JSON type. The metadata is the
     * request's own map of strings.
     */
    private static void assertShapedLike(JsonNode sample, JsonNode actual, String path) {
        assertThat(actual.getNodeType()).as("type of %s", path).isEqualTo(sample.getNodeType());
        assertThat(actual.isIntegralNumber()).as("integral %s", path).isEqualTo(sample.isIntegralNumber());
        if (path.equals(".metadata")) {
            assertThat(actual).as(path).allMatch(JsonNode::isTextual);
        } else if (actual.isObject()) {
            List<String> fields = fieldNames(actual);
            List<String> sampleFields = fieldNames(sample);
            assertThat(fields).as("fields of %s", path).isSubsetOf(sampleFields);
            assertThat(fields)
                    .as("order of the fields of %s", path)
                    .isEqualTo(sampleFields.stream().filter(fields::contains).toList());
            fields.forEach(field -> assertShapedLike(sample.get(field), actual.get(field), path + "." + field));
        }
    }

    private static List<String> fieldNames(JsonNode object) {
        List<String> names = new ArrayList<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static Set<String> headerNames(ConsumerRecord<byte[], byte[]> record) {
        Set<String> names = new TreeSet<>();
        for (Header header : record.headers()) {
            if (!header.key().equals("traceparent") && !header.key().equals("tracestate")) {
                names.add(header.key());
            }
        }
        return names;
    }
}
