package io.imageworker.messaging;

import io.imageworker.messaging.offsets.RecordCopy;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
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

    /** Where {@code message}, taken from a request topic now, came from. */
    static RecordContext of(Message<byte[]> message) {
        return of(message, null);
    }

    /**
     * The same; a record of {@code parkedTopic} (null: none) keeps the key of the record it was parked from, which
     * travels in a header ({@link RequestParking#KEY_HEADER}), so that its result is keyed as the request was.
     */
    static RecordContext of(Message<byte[]> message, String parkedTopic) {
        @SuppressWarnings("unchecked")
        IncomingKafkaRecordMetadata<byte[], byte[]> kafka =
                message.getMetadata(IncomingKafkaRecordMetadata.class).orElseThrow();
        byte[] key = kafka.getKey();
        if (kafka.getTopic().equals(parkedTopic)) {
            Header own = kafka.getHeaders().lastHeader(RequestParking.KEY_HEADER);
            key = own == null ? null : own.value();
        }
        return new RecordContext(
                key, kafka.getHeaders(), kafka.getTopic(), kafka.getPartition(), kafka.getOffset(), Instant.now());
    }

    /** {@code topic-partition@offset}, for log lines. */
    public String position() {
        return topic + "-" + partition + "@" + offset;
    }
}
