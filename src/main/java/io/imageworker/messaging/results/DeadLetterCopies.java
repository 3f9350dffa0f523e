package io.imageworker.messaging.results;

import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.AbstractRecords;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.RecordBatch;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The DLQ copy of an unreadable record ({@link ResultPublisher#deadLetter}): the record byte for byte with the DLQ's
 * headers, or, when that whole copy would be larger than Kafka takes, a copy fitted to {@code max.request.size}.
 */
final class DeadLetterCopies {

    /**
     * The room a DLQ copy too large to copy whole leaves for the DLQ's own headers and Kafka's overhead: far more
     * than they take.
     */
    static final int CUT_BYTES = 16 * 1024;

    /** How much of a key too large to copy whole a DLQ copy keeps. */
    static final int KEPT_KEY_BYTES = 1024;

    /** The longest list of dropped header names a DLQ copy gives, and the longest name in it. */
    private static final int MAX_DROPPED_LIST = 2048;

    private static final int MAX_DROPPED_NAME = 64;

    /** What a record header takes beside its name and value, at most (two varint lengths). */
    private static final int HEADER_OVERHEAD = 10;

    private final int maxRecordBytes;

    /** @param maxRecordBytes the largest record the producers send ({@code max.request.size}) */
    DeadLetterCopies(int maxRecordBytes) {
        this.maxRecordBytes = maxRecordBytes;
    }

    /** The whole DLQ copy when it fits in a record Kafka takes, else the fitted one. */
    Message<byte[]> copy(byte[] value, RecordContext request, String reason) {
        Message<byte[]> whole = deadLetterCopy(value, request.key(), request.headers(), request, reason, List.of());
        return size(whole) <= maxRecordBytes ? whole : fitted(value, request, reason);
    }

    /**
     * The DLQ copy of a record too large to copy whole, made to fit in {@code max.request.size} less {@value
     * #CUT_BYTES} bytes (the DLQ's own headers): its key and its headers take at most half of that (a key larger is
     * cut to its first {@value #KEPT_KEY_BYTES} bytes, headers that do not fit are dropped, in their order), its
     * value the rest (cut to its first bytes). {@code dead-letter-value-bytes} and {@code dead-letter-key-bytes} give
     * the lengths of what was cut, {@code dead-letter-dropped-headers} the names of what was dropped, and the reason
     * says so.
     */
    Message<byte[]> fitted(byte[] value, RecordContext request, String reason) {
        int budget = maxRecordBytes - CUT_BYTES;
        int half = budget / 2;
        List<Header> added = new ArrayList<>();
        List<String> cuts = new ArrayList<>();
        byte[] key = request.key();
        if (key != null && key.length > half) {
            cuts.add("the key to its first " + KEPT_KEY_BYTES + " of " + key.length + " bytes");
            added.add(header("dead-letter-key-bytes", Integer.toString(key.length)));
            key = Arrays.copyOf(key, KEPT_KEY_BYTES);
        }
        int used = key == null ? 0 : key.length;
        RecordHeaders kept = new RecordHeaders();
        StringBuilder dropped = new StringBuilder();
        if (request.headers() != null) {
            for (Header header : request.headers()) {
                byte[] name = bytes(header.key());
                int cost = HEADER_OVERHEAD + name.length + (header.value() == null ? 0 : header.value().length);
                if (used + cost <= half) {
                    kept.add(header);
                    used += cost;
                } else if (dropped.length() < MAX_DROPPED_LIST) {
                    String shown = header.key().length() <= MAX_DROPPED_NAME
                            ? header.key()
                            : header.key().substring(0, MAX_DROPPED_NAME) + "...";
                    dropped.append(dropped.isEmpty() ? "" : ",").append(shown);
                }
            }
        }
        if (!dropped.isEmpty()) {
            cuts.add("headers dropped: " + dropped);
            added.add(header("dead-letter-dropped-headers", dropped.toString()));
        }
        byte[] keptValue = value;
        if (value != null && value.length > budget - used) {
            keptValue = Arrays.copyOf(value, budget - used);
            cuts.add(0, "the value is cut to its first " + keptValue.length + " of " + value.length + " bytes");
            added.add(header("dead-letter-value-bytes", Integer.toString(value.length)));
        }
        return deadLetterCopy(
                keptValue,
                key,
                kept,
                request,
                reason + "; " + (cuts.isEmpty() ? "nothing to cut" : String.join(", ", cuts))
                        + ": the whole copy is larger than Kafka takes",
                added);
    }

    /** The size Kafka's producer gives {@code message}'s record, to compare with {@code max.request.size}. */
    private static int size(Message<byte[]> message) {
        @SuppressWarnings("unchecked")
        OutgoingKafkaRecordMetadata<byte[]> kafka =
                message.getMetadata(OutgoingKafkaRecordMetadata.class).orElseThrow();
        return AbstractRecords.estimateSizeInBytesUpperBound(
                RecordBatch.CURRENT_MAGIC_VALUE,
                CompressionType.NONE,
                kafka.getKey(),
                message.getPayload(),
                kafka.getHeaders().toArray());
    }

    /** Whether {@code failure} is Kafka refusing a record as too large (no retry heals it). */
    static boolean isTooLarge(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof RecordTooLargeException) {
                return true;
            }
        }
        return false;
    }

    /**
     * A DLQ copy of {@code value} with {@code key} and {@code copied} (the record's headers, or those kept), the DLQ
     * headers of {@code request} and {@code reason}, and {@code added}.
     */
    private static Message<byte[]> deadLetterCopy(
            byte[] value, byte[] key, Headers copied, RecordContext request, String reason, List<Header> added) {
        RecordHeaders headers = new RecordHeaders();
        if (copied != null) {
            for (Header header : copied) {
                headers.add(header.key(), header.value());
            }
        }
        headers.add("dead-letter-reason", bytes(reason));
        headers.add("dead-letter-topic", bytes(request.topic()));
        headers.add("dead-letter-partition", bytes(Integer.toString(request.partition())));
        headers.add("dead-letter-offset", bytes(Long.toString(request.offset())));
        added.forEach(headers::add);
        return Message.of(value)
                .addMetadata(OutgoingKafkaRecordMetadata.<byte[]>builder()
                        .withKey(key)
                        .withHeaders(headers)
                        .build());
    }

    private static Header header(String name, String value) {
        return new RecordHeader(name, bytes(value));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
