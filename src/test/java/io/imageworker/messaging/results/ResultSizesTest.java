package io.imageworker.messaging.results;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.config.TopicSettings;
import io.imageworker.testing.TestConfig;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.AbstractRecords;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What a result or a DLQ copy carries of its record, whatever the record's shape: never more than a Kafka record takes
 * ({@code max.request.size}, 1 MiB by default), and everything when it fits. {@code HostileCorpusTest} sends such
 * records to the real broker; this goes through the shapes one by one.
 */
class ResultSizesTest {

    private static final int MAX = ResultPublisher.DEFAULT_MAX_RECORD_BYTES;
    private static final int ROOM = MAX - ResultEnvelope.RESULT_ROOM;

    private final ResultPublisher publisher = new ResultPublisher(
            null, null, null, null, null, TestConfig.worker(), TestConfig.settings(TopicSettings.class), Map.of());

    @Test
    void aResultKeepsAKeyAndTracestateThatLeaveItRoom() {
        ResultEnvelope envelope = ResultEnvelope.of(bytes("k-1"), "v=1", "r-1", MAX);

        assertThat(envelope.key()).isEqualTo(bytes("k-1"));
        assertThat(envelope.tracestate()).isEqualTo("v=1");
        assertThat(envelope.cut()).isNull();
        assertThat(ResultEnvelope.of(null, null, "r-1", MAX).key()).isEqualTo(bytes("r-1"));
        assertThat(ResultEnvelope.of(filled(ROOM), null, "r-1", MAX).cut()).isNull();
    }

    @Test
    void aKeyThatLeavesNoRoomIsReplacedByTheRequestId() {
        ResultEnvelope envelope = ResultEnvelope.of(filled(ROOM + 1), "v=1", "r-1", MAX);

        assertThat(envelope.key()).isEqualTo(bytes("r-1"));
        assertThat(envelope.tracestate()).isEqualTo("v=1");
        assertThat(envelope.cut())
                .contains("at most 1048576 bytes")
                .contains("this event is keyed by its requestId, not by the record's key (" + (ROOM + 1) + " bytes)")
                .doesNotContain("tracestate");
    }

    @ParameterizedTest(name = "key {0} bytes, tracestate {1} characters")
    @CsvSource({"3, 1040000", "600000, 600000", "1047800, 1040000"})
    void aTracestateThatStillLeavesNoRoomIsDropped(int keyBytes, int traceChars) {
        ResultEnvelope envelope = ResultEnvelope.of(filled(keyBytes), "t".repeat(traceChars), "r-1", MAX);

        assertThat(envelope.tracestate()).isNull();
        assertThat(envelope.key()).isEqualTo(keyBytes > ROOM ? bytes("r-1") : filled(keyBytes));
        assertThat(envelope.key().length + ResultEnvelope.RESULT_ROOM).isLessThanOrEqualTo(MAX);
        assertThat(envelope.cut())
                .contains("this event goes without the record's tracestate header (" + traceChars + " bytes)");
    }

    /** Whatever the record held, its DLQ copy fits; a copy Kafka refused anyway ({@code cut}) fits too. */
    @ParameterizedTest(name = "value {0}, key {1}, headers {2}")
    @CsvSource({
        "-1, 1048400, none",
        "5, 1048400, none",
        "1048400, -1, none",
        "1048400, 10, small",
        "5, 10, huge",
        "5, 600000, huge",
        "5, -1, many",
        "600000, 600000, many",
        "5, 10, long-name",
        "1048400, 1048400, huge",
    })
    void aDeadLetterCopyAlwaysFits(int valueBytes, int keyBytes, String headers) {
        RecordContext record = record(keyBytes < 0 ? null : filled(keyBytes), headers(headers));
        byte[] value = valueBytes < 0 ? null : filled(valueBytes);

        for (boolean cut : new boolean[] {false, true}) {
            ProducerRecord<byte[], byte[]> copy = publisher.deadLetterRecord(value, record, "not JSON", cut);
            assertThat(size(copy)).as("cut %s", cut).isLessThanOrEqualTo(MAX);
            String reason = header(copy, "dead-letter-reason");
            if (reason.equals("not JSON")) {
                // It fit whole.
                assertThat(cut).isFalse();
                assertThat(copy.value()).isEqualTo(value);
                assertThat(copy.key()).isEqualTo(record.key());
                continue;
            }
            assertThat(reason).startsWith("not JSON; ").endsWith(": the whole copy is larger than Kafka takes");
            if (value != null && copy.value().length < value.length) {
                assertThat(value).startsWith(copy.value());
                assertThat(header(copy, "dead-letter-value-bytes")).isEqualTo(Integer.toString(valueBytes));
            }
            if (record.key() != null && copy.key().length < record.key().length) {
                assertThat(copy.key()).isEqualTo(Arrays.copyOf(record.key(), DeadLetterCopies.KEPT_KEY_BYTES));
                assertThat(header(copy, "dead-letter-key-bytes")).isEqualTo(Integer.toString(keyBytes));
            }
        }
    }

    @Test
    void aDeadLetterCopyThatFitsIsByteForByte() {
        RecordContext record = record(bytes("k"), headers("small"));

        ProducerRecord<byte[], byte[]> copy = publisher.deadLetterRecord(bytes("hello"), record, "not JSON", false);

        assertThat(copy.key()).isEqualTo(bytes("k"));
        assertThat(copy.value()).isEqualTo(bytes("hello"));
        assertThat(header(copy, "origin")).isEqualTo("o");
        assertThat(header(copy, "dead-letter-reason")).isEqualTo("not JSON");
        assertThat(copy.headers().lastHeader("dead-letter-value-bytes")).isNull();
    }

    @Test
    void theHeadersThatDoNotFitAreDroppedAndNamed() {
        RecordContext record = record(bytes("k"), headers("huge"));

        ProducerRecord<byte[], byte[]> copy = publisher.deadLetterRecord(bytes("hello"), record, "not JSON", false);

        assertThat(copy.value()).isEqualTo(bytes("hello"));
        assertThat(copy.headers().lastHeader("huge") == null).as("huge dropped").isTrue();
        assertThat(header(copy, "origin")).isEqualTo("o");
        assertThat(header(copy, "dead-letter-dropped-headers")).isEqualTo("huge");
    }

    private static RecordHeaders headers(String shape) {
        RecordHeaders headers = new RecordHeaders();
        headers.add("origin", bytes("o"));
        switch (shape) {
            case "small" -> headers.add("ce_type", bytes("image.request"));
            case "huge" -> headers.add("huge", filled(1_048_500));
            case "many" -> {
                for (int i = 0; i < 300; i++) {
                    headers.add(new RecordHeader("h" + i, filled(4096)));
                }
            }
            case "long-name" -> headers.add("n".repeat(1_000_000), bytes("v"));
            default -> {}
        }
        return headers;
    }

    private static RecordContext record(byte[] key, RecordHeaders headers) {
        return new RecordContext(key, headers, "image-request", 3, 42, Instant.now());
    }

    private static int size(ProducerRecord<byte[], byte[]> record) {
        return AbstractRecords.estimateSizeInBytesUpperBound(
                RecordBatch.CURRENT_MAGIC_VALUE,
                CompressionType.NONE,
                record.key(),
                record.value(),
                record.headers().toArray());
    }

    private static String header(ProducerRecord<byte[], byte[]> record, String name) {
        var header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    private static byte[] filled(int length) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte) 'x');
        return bytes;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
