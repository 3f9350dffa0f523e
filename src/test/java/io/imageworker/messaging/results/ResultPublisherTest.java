package io.imageworker.messaging.results;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.config.TopicSettings;
import io.imageworker.contract.Billing;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.EventCodec;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.contract.TestCodec;
import io.imageworker.testing.TestConfig;
import io.opentelemetry.api.trace.Span;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/**
 * The records {@link ResultPublisher} makes for a transaction, at its own seam (no emitter, no broker): the key, the
 * CloudEvents binary headers, the trace continued, the JSON the ledger keeps, and what is cut when the request's
 * record leaves no room for its result.
 */
class ResultPublisherTest {

    private static final String TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    private static final int MAX_RECORD_BYTES = 100_000;

    private final EventCodec codec = TestCodec.codec();
    private final ResultPublisher publisher = new ResultPublisher(
            null,
            null,
            null,
            null,
            codec,
            TestConfig.worker(),
            TestConfig.settings(TopicSettings.class),
            Map.of(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(MAX_RECORD_BYTES)));

    @Test
    void aFailedRequestsResultIsACloudEventWithTheRequestsKeyAndTrace() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("traceparent", bytes(TRACEPARENT));
        headers.add("tracestate", bytes("vendor=1"));
        TerminalEvent event = failed("r-1");

        ProducerRecord<byte[], byte[]> record =
                publisher.record(event, request(bytes("the-key"), headers), Span.getInvalid());

        assertThat(record.topic()).isEqualTo("image-failed");
        assertThat(record.key()).isEqualTo(bytes("the-key"));
        assertThat(record.value()).isEqualTo(codec.write(event));
        assertThat(header(record, "ce_specversion")).isEqualTo("1.0");
        assertThat(header(record, "ce_type")).isEqualTo("image.failed");
        assertThat(header(record, "ce_source")).isEqualTo("image-worker");
        assertThat(header(record, "ce_subject")).isEqualTo("r-1");
        assertThat(header(record, "content-type")).isEqualTo("application/json");
        assertThat(header(record, "ce_id")).isNotBlank();
        assertThat(Instant.parse(header(record, "ce_time"))).isNotNull();
        assertThat(header(record, "traceparent"))
                .as("the producer's trace, continued with a span of the result's own")
                .startsWith("00-0af7651916cd43dd8448eb211c80319c-")
                .isNotEqualTo(TRACEPARENT);
        assertThat(header(record, "tracestate")).isEqualTo("vendor=1");
    }

    @Test
    void aRequestWithoutKeyOrTraceGivesAResultKeyedByItsId() {
        ProducerRecord<byte[], byte[]> record =
                publisher.record(failed("r-2"), request(null, new RecordHeaders()), Span.getInvalid());

        assertThat(record.key()).isEqualTo(bytes("r-2"));
        assertThat(record.headers().lastHeader("traceparent")).isNull();
        assertThat(record.headers().lastHeader("tracestate")).isNull();
    }

    @Test
    void aKeyThatLeavesNoRoomForTheResultIsReplacedByTheRequestId() {
        byte[] huge = new byte[MAX_RECORD_BYTES - ResultEnvelope.RESULT_ROOM + 1];
        Arrays.fill(huge, (byte) 'k');
        RecordContext request = request(huge, new RecordHeaders());

        ProducerRecord<byte[], byte[]> record = publisher.record(failed("r-3"), request, Span.getInvalid());

        assertThat(record.key()).isEqualTo(bytes("r-3"));
        assertThat(publisher.envelope(request, "r-3", Span.getInvalid()).cut())
                .contains("keyed by its requestId")
                .contains(Integer.toString(MAX_RECORD_BYTES));
        assertThat(publisher
                        .envelope(request(bytes("small"), new RecordHeaders()), "r-3", Span.getInvalid())
                        .cut())
                .isNull();
    }

    @Test
    void aDeadLetterCopyKeepsTheRecordAndSaysWhereItCameFrom() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("x-origin", bytes("here"));
        byte[] value = bytes("not json");

        ProducerRecord<byte[], byte[]> copy =
                publisher.deadLetterRecord(value, request(bytes("k"), headers), "not JSON", false);

        assertThat(copy.topic()).isEqualTo("image-request-dlq");
        assertThat(copy.key()).isEqualTo(bytes("k"));
        assertThat(copy.value()).isEqualTo(value);
        assertThat(header(copy, "x-origin")).isEqualTo("here");
        assertThat(header(copy, "dead-letter-reason")).isEqualTo("not JSON");
        assertThat(header(copy, "dead-letter-topic")).isEqualTo("image-requests");
        assertThat(header(copy, "dead-letter-partition")).isEqualTo("3");
        assertThat(header(copy, "dead-letter-offset")).isEqualTo("42");
    }

    @Test
    void aDeadLetterCopyCutToFitSaysWhatWasCut() {
        byte[] value = new byte[MAX_RECORD_BYTES];

        ProducerRecord<byte[], byte[]> copy =
                publisher.deadLetterRecord(value, request(bytes("k"), new RecordHeaders()), "too large", true);

        assertThat(copy.value().length).isLessThan(MAX_RECORD_BYTES - DeadLetterCopies.CUT_BYTES);
        assertThat(header(copy, "dead-letter-value-bytes")).isEqualTo(Integer.toString(MAX_RECORD_BYTES));
        assertThat(header(copy, "dead-letter-reason")).startsWith("too large; the value is cut");
    }

    private static RecordContext request(byte[] key, RecordHeaders headers) {
        return new RecordContext(key, headers, "image-requests", 3, 42, Instant.now());
    }

    private static String header(ProducerRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        assertThat(header).as(name).isNotNull();
        return new String(header.value(), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static TerminalEvent failed(String requestId) {
        return new TerminalEvent.Failed(
                requestId,
                "generate",
                new TerminalEvent.Error(ErrorCode.REJECTED, "refused", false, 400, null),
                null,
                null,
                1,
                new Billing(1, 1, 0),
                new TerminalEvent.Timings(Instant.EPOCH, Instant.EPOCH, Instant.EPOCH, null, null),
                Map.of(),
                null);
    }
}
