package io.imageworker.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Reads a request record's value as plain JSON or as a CloudEvent (binary mode: {@code ce_*} headers with the JSON
 * request as the value; structured mode: a {@code application/cloudevents+json} envelope whose {@code data} is the
 * request). A record that gives no JSON object with a usable {@code requestId} is unreadable: it goes to the DLQ.
 */
@ApplicationScoped
public class RecordReader {

    /** Longest {@code requestId} still echoed on an {@code image-failed}; longer ones are unreadable. */
    static final int MAX_USABLE_ID = 1024;

    private final ObjectMapper mapper;

    RecordReader(ObjectMapper mapper) {
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
        if (id == null || !id.isTextual() || id.asText().isBlank()) {
            return new Read.Unreadable("no requestId");
        }
        if (id.asText().length() > MAX_USABLE_ID) {
            return new Read.Unreadable("requestId longer than " + MAX_USABLE_ID + " characters");
        }
        return new Read.Request(id.asText(), json);
    }

    private static boolean isStructuredCloudEvent(Headers headers, JsonNode json) {
        String contentType = header(headers, "content-type");
        if (contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("application/cloudevents+json")) {
            return true;
        }
        return !json.has("requestId") && json.has("specversion") && json.has("data");
    }

    /** The last value of a header as UTF-8, or null. */
    public static String header(Headers headers, String name) {
        if (headers == null) {
            return null;
        }
        Header header = headers.lastHeader(name);
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unparseable";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    /** The outcome of reading one record. */
    public sealed interface Read {
        /** A JSON request with a usable {@code requestId}; the contract is checked later. */
        record Request(String requestId, JsonNode json) implements Read {}

        /** Not a request at all. */
        record Unreadable(String reason) implements Read {}
    }
}
