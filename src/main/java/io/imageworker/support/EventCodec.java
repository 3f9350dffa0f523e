package io.imageworker.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.TerminalEvent;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;

/**
 * The one JSON form of a terminal event: the payload published on {@code image-completed} / {@code image-failed}, and
 * the result document that records it.
 */
@ApplicationScoped
public class EventCodec {

    private final ObjectMapper mapper;

    EventCodec(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    /** The event's JSON. */
    public byte[] write(TerminalEvent event) {
        try {
            return mapper.writeValueAsBytes(event);
        } catch (IOException e) {
            throw new IllegalStateException("cannot serialize the result of " + event.requestId(), e);
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
