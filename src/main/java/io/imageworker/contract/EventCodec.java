package io.imageworker.contract;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;

/**
 * The one JSON form of a terminal event: the payload published on {@code image-completed} / {@code image-failed}, and
 * the result document that records it; and of the other documents and events built from the same records (a
 * variant's record, {@code image.started}). It stands with the records it writes, the contract: the ledger
 * ({@code storage.ResultLedger}) keeps the same JSON that the publisher ({@code messaging.results.ResultPublisher})
 * sends.
 */
@ApplicationScoped
public class EventCodec {

    private final ObjectMapper mapper;

    EventCodec(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    /** The event's JSON. */
    public byte[] write(TerminalEvent event) {
        return json(event, event.requestId());
    }

    /** The record of a variant of {@code requestId}. */
    public byte[] write(String requestId, VariantOutcome variant) {
        return json(variant, requestId);
    }

    /** The JSON of an {@code image.started} event. */
    public byte[] write(ImageStarted event) {
        return json(event, event.requestId());
    }

    private byte[] json(Object value, String requestId) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new IllegalStateException("cannot serialize a document of " + requestId, e);
        }
    }

    /**
     * The variant a record holds.
     *
     * @throws IOException when it is not the JSON of a variant's record
     */
    public VariantOutcome readVariant(byte[] json) throws IOException {
        try {
            VariantOutcome variant = mapper.readValue(json, VariantOutcome.class);
            if (variant == null || variant.variant() < 1 || variant.delivered() == (variant.error() != null)) {
                throw new IOException("not the record of a variant");
            }
            return variant;
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /**
     * The event a JSON document holds.
     *
     * @throws IOException when it is not the JSON of a terminal event
     */
    public TerminalEvent read(byte[] json) throws IOException {
        try {
            JsonNode node = mapper.readTree(json);
            if (node == null || !node.isObject()) {
                throw new IOException("not a JSON object");
            }
            return node.has("image")
                    ? mapper.treeToValue(node, TerminalEvent.Completed.class)
                    : mapper.treeToValue(node, TerminalEvent.Failed.class);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
    }
}
