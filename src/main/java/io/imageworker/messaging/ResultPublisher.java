package io.imageworker.messaging;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.TerminalEvent;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.UUID;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

/**
 * Publishes terminal events as CloudEvents 1.0 in binary mode, and unreadable records to the DLQ. Every send is
 * awaited: the returned {@code Uni} completes only when Kafka has acknowledged the record, so a request is never
 * committed before its result is safely written.
 */
@ApplicationScoped
public class ResultPublisher {

    /** {@code ce_source} of every result. */
    public static final String SOURCE = "image-worker";

    /** How much of a value too large to copy whole is left out: far more than the DLQ headers take. */
    static final int CUT_BYTES = 16 * 1024;

    private final MutinyEmitter<byte[]> completed;
    private final MutinyEmitter<byte[]> failed;
    private final MutinyEmitter<byte[]> deadLetters;
    private final ObjectMapper mapper;

    ResultPublisher(
            @Channel("completed") @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 4096)
                    MutinyEmitter<byte[]> completed,
            @Channel("failed") @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 4096)
                    MutinyEmitter<byte[]> failed,
            @Channel("dead-letters") @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 4096)
                    MutinyEmitter<byte[]> deadLetters,
            ObjectMapper mapper) {
        this.completed = completed;
        this.failed = failed;
        this.deadLetters = deadLetters;
        this.mapper = mapper;
    }

    /** The JSON of an event, as published and as kept in the result document. */
    public byte[] serialize(TerminalEvent event) {
        try {
            return mapper.writeValueAsBytes(event);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize the result of " + event.requestId(), e);
        }
    }

    /** Publishes {@code event} with the request's key (or the requestId) and its continued trace. */
    public Uni<Void> publish(TerminalEvent event, RecordContext request) {
        RecordHeaders headers = new RecordHeaders();
        headers.add("ce_specversion", bytes("1.0"));
        headers.add("ce_id", bytes(UUID.randomUUID().toString()));
        headers.add("ce_source", bytes(SOURCE));
        headers.add("ce_type", bytes(event.ceType()));
        headers.add("ce_subject", bytes(event.requestId()));
        headers.add("ce_time", bytes(Instant.now().toString()));
        headers.add("content-type", bytes("application/json"));
        String traceparent = TraceContext.continueTrace(RecordReader.header(request.headers(), "traceparent"));
        if (traceparent != null) {
            headers.add("traceparent", bytes(traceparent));
            String tracestate = RecordReader.header(request.headers(), "tracestate");
            if (tracestate != null) {
                headers.add("tracestate", bytes(tracestate));
            }
        }
        byte[] key = request.key() != null ? request.key() : bytes(event.requestId());
        Message<byte[]> message = Message.of(serialize(event))
                .addMetadata(OutgoingKafkaRecordMetadata.<byte[]>builder()
                        .withKey(key)
                        .withHeaders(headers)
                        .build());
        return (event instanceof TerminalEvent.Completed ? completed : failed).sendMessage(message);
    }

    /**
     * Sends an unreadable record to the DLQ byte for byte: same key, same value, its headers, plus
     * {@code dead-letter-reason}, {@code dead-letter-topic}, {@code dead-letter-partition} and
     * {@code dead-letter-offset} (the names SmallRye's own DLQ uses).
     *
     * <p>A record as large as Kafka takes has no room left for those headers: its whole copy is refused as too large,
     * a refusal no retry heals, and a record that cannot be brought to an end fails the channel. Such a copy is sent
     * again with its value cut by {@value #CUT_BYTES} bytes, {@code dead-letter-value-bytes} giving the length of the
     * whole value and the reason saying so.
     */
    public Uni<Void> deadLetter(byte[] value, RecordContext request, String reason) {
        return deadLetters
                .sendMessage(deadLetterCopy(value, request, reason, null))
                .onFailure(ResultPublisher::isTooLarge)
                .recoverWithUni(tooLarge -> {
                    if (value == null) {
                        return Uni.createFrom().failure(tooLarge);
                    }
                    byte[] cut = Arrays.copyOf(value, Math.max(0, value.length - CUT_BYTES));
                    return deadLetters.sendMessage(deadLetterCopy(
                            cut,
                            request,
                            reason + "; the value is cut to its first " + cut.length + " of " + value.length
                                    + " bytes: the whole copy is larger than Kafka takes",
                            value.length));
                });
    }

    private static boolean isTooLarge(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof RecordTooLargeException) {
                return true;
            }
        }
        return false;
    }

    private static Message<byte[]> deadLetterCopy(
            byte[] value, RecordContext request, String reason, Integer wholeLength) {
        RecordHeaders headers = new RecordHeaders();
        if (request.headers() != null) {
            for (Header header : request.headers()) {
                headers.add(header.key(), header.value());
            }
        }
        headers.add("dead-letter-reason", bytes(reason));
        headers.add("dead-letter-topic", bytes(request.topic()));
        headers.add("dead-letter-partition", bytes(Integer.toString(request.partition())));
        headers.add("dead-letter-offset", bytes(Long.toString(request.offset())));
        if (wholeLength != null) {
            headers.add("dead-letter-value-bytes", bytes(Integer.toString(wholeLength)));
        }
        return Message.of(value)
                .addMetadata(OutgoingKafkaRecordMetadata.<byte[]>builder()
                        .withKey(request.key())
                        .withHeaders(headers)
                        .build());
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
