package io.imageworker.messaging;

import java.time.Instant;
import org.apache.kafka.common.header.Headers;

/**
 * Where a request record came from, for its result: the key to keep, the trace to continue, and its position for
 * log lines and the DLQ.
 */
public record RecordContext(byte[] key, Headers headers, String topic, int partition, long offset, Instant receivedAt) {

    /** {@code topic-partition@offset}, for log lines. */
    public String position() {
        return topic + "-" + partition + "@" + offset;
    }
}
