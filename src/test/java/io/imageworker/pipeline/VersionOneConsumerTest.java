package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.storage.ImageStore;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.Fault;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A consumer of contract v1 sees, for a request without {@code count} or with {@code count: 1}, byte for byte what it
 * saw before contract v1.1: the same key, the same headers, and a payload that is exactly what the v1 event records
 * (frozen below, as they were) write for its values: no field more, none moved, none formatted otherwise.
 */
@QuarkusTest
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
        assertThat(asVersionOne(record.value(), V1.Completed.class)).isEqualTo(record.value());
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
        assertThat(asVersionOne(record.value(), V1.Failed.class)).isEqualTo(record.value());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\"count\":1"})
    void aResultRecordedByAVersionOneWorkerIsReplayedByteForByte(String count) throws Exception {
        String id = newId("v1replay");
        String key = "images/" + id + ".png";
        byte[] recorded = mapper.writeValueAsBytes(new V1.Completed(
                id,
                "generate",
                new V1.StoredImage(
                        WorkerTestResource.BUCKET,
                        key,
                        "s3://" + WorkerTestResource.BUCKET + "/" + key,
                        null,
                        "image/png",
                        1024,
                        1024,
                        2048,
                        "ab".repeat(32)),
                new V1.SizeReport(null, "1024x1024", "1024x1024", true),
                1,
                new V1.Billing(1, 1, 0),
                new V1.Timings(
                        Instant.parse("2026-01-05T10:15:20.511Z"),
                        Instant.parse("2026-01-05T10:15:20.530Z"),
                        Instant.parse("2026-01-05T10:15:42.118Z"),
                        21345L,
                        83L),
                Map.of("sku", "A-17")));
        store.putResult(id, recorded).await().atMost(WITHIN);
        send(request(id, count));

        assertThat(result(id).value()).isEqualTo(recorded);
        assertThat(callsFor(id)).isEmpty();
    }

    private byte[] asVersionOne(byte[] payload, Class<?> type) throws Exception {
        ObjectMapper strict = mapper.copy().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        return strict.writeValueAsBytes(strict.readValue(payload, type));
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

    /** The event records of contract v1, as they were before v1.1, field for field and in the same order. */
    interface V1 {
        @JsonInclude(JsonInclude.Include.NON_NULL)
        record Completed(
                String requestId,
                String operation,
                StoredImage image,
                SizeReport size,
                int attempts,
                Billing billing,
                Timings timings,
                Map<String, String> metadata) {}

        @JsonInclude(JsonInclude.Include.NON_NULL)
        record Failed(
                String requestId,
                String operation,
                Error error,
                SizeReport size,
                int attempts,
                Billing billing,
                Timings timings,
                Map<String, String> metadata) {}

        @JsonInclude(JsonInclude.Include.NON_NULL)
        record Error(String code, String message, boolean retryable, Integer gatewayStatus, String gatewayBody) {}

        @JsonInclude(JsonInclude.Include.NON_NULL)
        record StoredImage(
                String bucket,
                String key,
                String uri,
                String url,
                String contentType,
                int width,
                int height,
                long bytes,
                String sha256) {}

        @JsonInclude(JsonInclude.Include.NON_NULL)
        record SizeReport(String requested, String sent, String actual, Boolean matched) {}

        @JsonInclude(JsonInclude.Include.NON_NULL)
        record Timings(Instant receivedAt, Instant startedAt, Instant completedAt, Long gatewayMs, Long storeMs) {}

        record Billing(int calls, int billed, int unknown) {}
    }
}
