package io.imageworker.console;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.contract.RequestId;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * An event of the result topics ({@code image.completed}, {@code image.failed}) or of the status topic ({@code
 * image.started}) read as a {@link ConsoleEntry}. Anyone who may write those topics can write anything there: a record
 * that is not such an event (not JSON, no valid {@code requestId}) is none, and a field of the wrong type is left out.
 * Only the fields the console shows are kept (not the metadata, not the URL, the gateway's body cut).
 */
final class ConsoleEvents {

    /** Which topic a record came from. */
    enum Kind {
        COMPLETED,
        FAILED,
        STARTED
    }

    private ConsoleEvents() {}

    /** {@code value}, read from a topic of {@code kind} at {@code atMillis}, as an entry; empty when it is none. */
    static Optional<ConsoleEntry> read(ObjectMapper json, Kind kind, byte[] value, long atMillis) {
        if (value == null) {
            return Optional.empty();
        }
        JsonNode event;
        try {
            event = json.readTree(value);
        } catch (IOException e) {
            return Optional.empty();
        }
        if (event == null || !event.isObject()) {
            return Optional.empty();
        }
        String requestId = text(event, "requestId");
        if (requestId == null || !RequestId.isValid(requestId)) {
            return Optional.empty();
        }
        JsonNode timings = event.path("timings");
        String state;
        ConsoleEntry.Error error = null;
        if (kind == Kind.STARTED) {
            state = "calling";
        } else if (kind == Kind.COMPLETED) {
            state = "completed";
        } else {
            JsonNode failure = event.path("error");
            String body = text(failure, "gatewayBody");
            if (body != null && body.length() > ConsoleEntry.Error.BODY_CHARS) {
                body = body.substring(0, ConsoleEntry.Error.BODY_CHARS) + "…";
            }
            error = new ConsoleEntry.Error(
                    text(failure, "code"),
                    cut(text(failure, "message"), 512),
                    failure.path("retryable").isBoolean()
                            ? failure.path("retryable").asBoolean()
                            : null,
                    integer(failure, "gatewayStatus"),
                    body);
            state = "CANCELLED".equals(error.code()) ? "cancelled" : "failed";
        }
        ConsoleEntry.Timings times = kind == Kind.STARTED
                ? new ConsoleEntry.Timings(null, text(event, "startedAt"), null, number(event, "queuedMs"), null, null)
                : new ConsoleEntry.Timings(
                        text(timings, "receivedAt"),
                        text(timings, "startedAt"),
                        text(timings, "completedAt"),
                        null,
                        number(timings, "gatewayMs"),
                        number(timings, "storeMs"));
        JsonNode billing = event.path("billing");
        JsonNode size = event.path("size");
        JsonNode variants = event.path("variants");
        return Optional.of(new ConsoleEntry(
                0,
                requestId,
                cut(text(event, "producer"), 64),
                state,
                cut(text(event, "operation"), 16),
                kind == Kind.STARTED ? integer(event, "attempt") : integer(event, "attempts"),
                billing.isObject()
                        ? new ConsoleEntry.Billing(
                                billing.path("calls").asInt(),
                                billing.path("billed").asInt(),
                                billing.path("unknown").asInt())
                        : null,
                times,
                kind == Kind.COMPLETED ? images(event) : null,
                size.isObject()
                        ? new ConsoleEntry.Size(
                                cut(text(size, "requested"), 32),
                                cut(text(size, "sent"), 32),
                                cut(text(size, "actual"), 32),
                                size.path("matched").isBoolean()
                                        ? size.path("matched").asBoolean()
                                        : null)
                        : null,
                error,
                variants.isObject()
                        ? new ConsoleEntry.Variants(
                                variants.path("requested").asInt(),
                                variants.path("delivered").asInt(),
                                variants.path("failed").asInt())
                        : null,
                atMillis));
    }

    /** The stored images: {@code images} with {@code count}, else the one {@code image}; at most eight. */
    private static List<ConsoleEntry.Image> images(JsonNode event) {
        List<ConsoleEntry.Image> images = new ArrayList<>();
        JsonNode many = event.path("images");
        if (many.isArray() && !many.isEmpty()) {
            for (JsonNode image : many) {
                if (images.size() < 8 && image.isObject()) {
                    images.add(image(image));
                }
            }
        } else if (event.path("image").isObject()) {
            images.add(image(event.path("image")));
        }
        return images;
    }

    private static ConsoleEntry.Image image(JsonNode image) {
        return new ConsoleEntry.Image(
                cut(text(image, "bucket"), 63),
                cut(text(image, "key"), 1024),
                cut(text(image, "contentType"), 32),
                integer(image, "width"),
                integer(image, "height"),
                number(image, "bytes"),
                cut(text(image, "sha256"), 64));
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.path(field);
        return value.isTextual() ? value.asText() : null;
    }

    private static Integer integer(JsonNode node, String field) {
        JsonNode value = node.path(field);
        return value.canConvertToInt() && value.isIntegralNumber() ? value.asInt() : null;
    }

    private static Long number(JsonNode node, String field) {
        JsonNode value = node.path(field);
        return value.isIntegralNumber() && value.canConvertToLong() ? value.asLong() : null;
    }

    private static String cut(String text, int most) {
        return text == null || text.length() <= most ? text : text.substring(0, most);
    }
}
