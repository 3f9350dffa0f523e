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
import java.util.UUID;
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
     */
    public Uni<Void> deadLetter(byte[] value, RecordContext request, String reason) {
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
        Message<byte[]> message = Message.of(value)
                .addMetadata(OutgoingKafkaRecordMetadata.<byte[]>builder()
                        .withKey(request.key())
                        .withHeaders(headers)
                        .build());
        return deadLetters.sendMessage(message);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
