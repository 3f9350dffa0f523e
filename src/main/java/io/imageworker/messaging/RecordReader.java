package io.imageworker.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.contract.RequestId;
import io.imageworker.messaging.results.RecordContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Locale;
import java.util.function.Function;
import org.apache.kafka.common.header.Headers;

/**
 * Reads a request record's value as plain JSON or as a CloudEvent (binary mode: {@code ce_*} headers with the JSON
 * request as the value; structured mode: a {@code application/cloudevents+json} envelope whose {@code data} is the
 * request). A record that gives no JSON object with a {@code requestId} that follows the contract's rule ({@link
 * RequestId}) is unreadable: it goes to the DLQ, with the reason in its headers. Such a record never reaches the store:
 * its id would become part of a storage key.
 */
@ApplicationScoped
public class RecordReader {

    /** The longest part of a parser's message kept in a DLQ reason. */
    static final int MAX_DETAIL = 200;

    private final ObjectMapper mapper;

    /** A reader parsing with {@code mapper} (Quarkus's, with its default limits on nesting, numbers and strings). */
    public RecordReader(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    /** What the record holds. */
    public Read read(byte[] value, Headers headers) {
        if (value == null || value.length == 0) {
            return new Read.Unreadable("empty record value");
        }
        JsonNode json;
        try {
            json = mapper.readTree(value);
        } catch (Exception e) {
            return new Read.Unreadable("value is not JSON: " + firstLine(e.getMessage()));
        }
        if (json == null || !json.isObject()) {
            return new Read.Unreadable("value is not a JSON object");
        }
        if (isStructuredCloudEvent(headers, json)) {
            json = json.get("data");
            if (json == null || !json.isObject()) {
                return new Read.Unreadable("CloudEvent data is not a JSON object");
            }
        }
        JsonNode id = json.get("requestId");
        if (id == null || id.isNull()) {
            return new Read.Unreadable("no requestId");
        }
        if (!id.isTextual()) {
            return new Read.Unreadable("requestId is not a string");
        }
        if (!RequestId.isValid(id.asText())) {
            // The id itself is not repeated: it may be long, or hold what a log or a header should not.
            return new Read.Unreadable("requestId breaks the contract's rule: " + RequestId.RULE + " ("
                    + id.asText().length() + " characters given)");
        }
        return new Read.Request(id.asText(), json);
    }

    private static boolean isStructuredCloudEvent(Headers headers, JsonNode json) {
        String contentType = RecordContext.header(headers, "content-type");
        if (contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("application/cloudevents+json")) {
            return true;
        }
        return !json.has("requestId") && json.has("specversion") && json.has("data");
    }

    /** The first line of a parser's message, at most {@value #MAX_DETAIL} characters: it quotes the record. */
    private static String firstLine(String message) {
        if (message == null) {
            return "unparseable";
        }
        int newline = message.indexOf('\n');
        String line = newline < 0 ? message : message.substring(0, newline);
        return line.length() <= MAX_DETAIL ? line : line.substring(0, MAX_DETAIL) + "...";
    }

    /**
     * The outcome of reading one record. {@link #either} is the switch over its kinds that Java 17 does not have yet
     * (patterns in {@code switch} come with 21): each kind handled, and a kind added fails to compile until it is.
     */
    public sealed interface Read {

        /** What {@code request} makes of a request, or {@code unreadable} of a record that is none. */
        <T> T either(Function<Request, T> request, Function<Unreadable, T> unreadable);

        /** A JSON request whose {@code requestId} follows the contract's rule; the other fields are checked later. */
        record Request(String requestId, JsonNode json) implements Read {
            @Override
            public <T> T either(Function<Request, T> request, Function<Unreadable, T> unreadable) {
                return request.apply(this);
            }
        }

        /** Not a request at all. */
        record Unreadable(String reason) implements Read {
            @Override
            public <T> T either(Function<Request, T> request, Function<Unreadable, T> unreadable) {
                return unreadable.apply(this);
            }
        }
    }
}
