package io.imageworker.messaging.results;

import io.imageworker.messaging.offsets.RecordCopy;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Where a request record came from, for its result: the key to keep, the trace to continue, and its position for
 * log lines and the DLQ. Each one made is one copy of the record, for its partition's commits.
 */
public record RecordContext(byte[] key, Headers headers, String topic, int partition, long offset, Instant receivedAt)
        implements RecordCopy {

    /**
     * The header a parked record's copy keeps the key of the record it was parked from in ({@code
     * messaging.parking.RequestParking}).
     */
    public static final String PARKED_KEY_HEADER = "image-worker-parked-key";

    /** Where {@code message}, taken from a request topic now, came from. */
    public static RecordContext of(Message<byte[]> message) {
        return of(message, null);
    }

    /**
     * The same; a record of {@code parkedTopic} (null: none) keeps the key of the record it was parked from, which
     * travels in a header ({@link #PARKED_KEY_HEADER}), so that its result is keyed as the request was.
     */
    public static RecordContext of(Message<byte[]> message, String parkedTopic) {
        @SuppressWarnings("unchecked")
        IncomingKafkaRecordMetadata<byte[], byte[]> kafka =
                message.getMetadata(IncomingKafkaRecordMetadata.class).orElseThrow();
        byte[] key = kafka.getKey();
        if (kafka.getTopic().equals(parkedTopic)) {
            Header own = kafka.getHeaders().lastHeader(PARKED_KEY_HEADER);
            key = own == null ? null : own.value();
        }
        return new RecordContext(
                key, kafka.getHeaders(), kafka.getTopic(), kafka.getPartition(), kafka.getOffset(), Instant.now());
    }

    /** {@code topic-partition@offset}, for log lines. */
    public String position() {
        return topic + "-" + partition + "@" + offset;
    }

    /** The last value of the header {@code name} of {@code headers} as UTF-8, or null. */
    public static String header(Headers headers, String name) {
        if (headers == null) {
            return null;
        }
        Header header = headers.lastHeader(name);
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
