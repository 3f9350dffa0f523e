package io.imageworker.gateway;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.support.BoundedBody;
import io.netty.channel.ConnectTimeoutException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Optional;

/**
 * Turns what came back from one gateway call into a {@link GatewayAnswer}: the one place where status codes, bodies
 * and transport errors are interpreted (the gateway contract, docs/gateway-contract.md, sections Errors and Answers).
 * Pure, so every rule is unit-tested without a server.
 *
 * <p>It reads the answer's bytes, never a {@code String} of them: a success is walked with Jackson's streaming parser
 * and its {@code b64_json} decoded straight from the body's byte range ({@link Base64Field}), so a 2.7 MB answer
 * costs its body and the decoded image, nothing more. It spends CPU in proportion to the answer: call it off the
 * event loops.
 */
public final class AnswerClassifier {

    /** Most of a failed answer's body read as text; an error envelope is far smaller, an HTML page is cut. */
    private static final int MAX_ERROR_BODY = 64 * 1024;

    private final ObjectMapper mapper;
    private final int keepBodyChars;

    /** A classifier keeping at most {@code keepBodyChars} of an answer for events. */
    public AnswerClassifier(ObjectMapper mapper, int keepBodyChars) {
        this.mapper = mapper;
        this.keepBodyChars = keepBodyChars;
    }

    /** Classifies an HTTP answer. {@code retryAfter} is the raw header value, or null. */
    public GatewayAnswer classify(int status, String contentType, String retryAfter, byte[] body, long latencyMs) {
        byte[] bytes = body == null ? new byte[0] : body;
        boolean html = isHtml(contentType, bytes);
        if (status >= 200 && status < 300 && !html) {
            return successBody(status, bytes, latencyMs);
        }
        // What is left is small or cut short: an error envelope, an HTML page, a proxy's answer.
        String text = new String(bytes, 0, Math.min(bytes.length, MAX_ERROR_BODY), StandardCharsets.UTF_8);
        Failed failed = failed(status, text, latencyMs);
        if (status >= 200 && status < 300) {
            return failed.as(
                    FailureKind.MISCONFIGURED,
                    "the gateway answered an HTML page instead of JSON: the base"
                            + " address points at a web page, not the API");
        }
        if (status >= 300 && status < 400) {
            return failed.as(
                    FailureKind.MISCONFIGURED,
                    "the gateway redirected the call (" + status + "): the base" + " address has a wrong path");
        }
        return switch (status) {
            case 401 ->
                failed.as(
                        FailureKind.UNAUTHORIZED,
                        "the gateway refused the token (401): it is wrong, deleted,"
                                + " out of quota, or the header is malformed");
            case 404 ->
                failed.as(
                        FailureKind.MISCONFIGURED,
                        "the gateway answered 404 Invalid URL: the base address is" + " wrong");
            case 429 ->
                failed.as(
                        FailureKind.RATE_LIMITED,
                        "the gateway is rate limiting (429)",
                        parseRetryAfter(retryAfter, Instant.now()).orElse(null));
            case 504, 524 ->
                failed.as(
                        FailureKind.TIMED_OUT,
                        "a proxy in front of the gateway gave up waiting (" + status
                                + "); the call may still be billed");
            default -> classifyOther(status, html, text, failed);
        };
    }

    private GatewayAnswer classifyOther(int status, boolean html, String text, Failed failed) {
        String code = errorCode(text);
        if (status >= 500) {
            if (html && status == 502) {
                return failed.as(
                        FailureKind.TIMED_OUT,
                        "a proxy in front of the gateway answered 502 with an HTML page;"
                                + " the call may still be billed");
            }
            if ("model_not_found".equals(code)) {
                return failed.as(
                        FailureKind.REFUSED,
                        "the gateway has no channel for the model: check"
                                + " IMAGE_WORKER_GATEWAY_MODEL (full name, date suffix included)");
            }
            if ("sensitive_words_detected".equals(code)) {
                return failed.as(FailureKind.REFUSED, "the gateway refused the prompt (sensitive words)");
            }
            return failed.as(FailureKind.UPSTREAM, "the gateway failed (" + status + ")");
        }
        if (html) {
            return failed.as(
                    FailureKind.MISCONFIGURED,
                    "the gateway answered an HTML page (" + status + ") instead of"
                            + " JSON: the base address points at a web page");
        }
        if (status == 403 || status == 413) {
            return failed.as(FailureKind.REFUSED, "the gateway refused the call before any work (" + status + ")");
        }
        String message = errorMessage(text)
                .map(m -> "the gateway refused the request (" + status + "): " + m)
                .orElse("the gateway refused the request (" + status + ")");
        return failed.as(FailureKind.REJECTED, message);
    }

    private GatewayAnswer successBody(int status, byte[] body, long latencyMs) {
        byte[] image = null;
        String url = null;
        boolean error = false;
        try (JsonParser parser = mapper.getFactory().createParser(body)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return invalidOutput("the gateway's 200 answer is not a JSON object", status, body, latencyMs);
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if ("data".equals(name) && value == JsonToken.START_ARRAY) {
                    if (parser.nextToken() == JsonToken.START_OBJECT) {
                        // data[0]: the one image of the answer.
                        while (parser.nextToken() == JsonToken.FIELD_NAME) {
                            String field = parser.currentName();
                            JsonToken token = parser.nextToken();
                            if (token == JsonToken.VALUE_STRING && "b64_json".equals(field)) {
                                image = Base64Field.decode(parser, body);
                                if (image.length > 0) {
                                    // All that is needed: the rest of the answer is not read (nor its 2 MB string
                                    // scanned a second time).
                                    return new GatewayAnswer.Image(image, null, latencyMs);
                                }
                            } else if (token == JsonToken.VALUE_STRING && "url".equals(field)) {
                                url = parser.getText().isEmpty() ? null : parser.getText();
                            } else {
                                parser.skipChildren();
                            }
                        }
                    } else {
                        parser.skipChildren();
                    }
                    skipRestOfArray(parser);
                } else {
                    error |= "error".equals(name);
                    parser.skipChildren();
                }
            }
            if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
                return invalidOutput("the gateway's 200 answer is not JSON", status, body, latencyMs);
            }
        } catch (Base64Field.InvalidBase64 e) {
            return invalidOutput("the gateway's b64_json is not valid base64", status, body, latencyMs);
        } catch (IOException e) {
            return invalidOutput("the gateway's 200 answer is not JSON", status, body, latencyMs);
        }
        if (image != null && image.length > 0 || url != null) {
            return new GatewayAnswer.Image(image != null && image.length > 0 ? image : null, url, latencyMs);
        }
        String text = new String(body, 0, Math.min(body.length, MAX_ERROR_BODY), StandardCharsets.UTF_8);
        String detail = error ? "an error body: " + errorMessage(text).orElse("no message") : "no image";
        return failed(status, text, latencyMs)
                .as(FailureKind.INVALID_OUTPUT, "the gateway's 200 answer holds " + detail);
    }

    private static void skipRestOfArray(JsonParser parser) throws IOException {
        for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
            if (token == null) {
                throw new IOException("the answer ends inside an array");
            }
            parser.skipChildren();
        }
    }

    private GatewayAnswer invalidOutput(String message, int status, byte[] body, long latencyMs) {
        String text = new String(body, 0, Math.min(body.length, keepBodyChars * 4), StandardCharsets.UTF_8);
        return failed(status, text, latencyMs).as(FailureKind.INVALID_OUTPUT, message);
    }

    /**
     * Classifies a call that got no HTTP answer. {@code staleConnection} says the call went out on a keep-alive
     * connection that had carried an earlier exchange and no byte of an answer came back
     * ({@link BoundedBody#failedOnReusedConnection()}).
     */
    public GatewayAnswer classify(Throwable error, boolean staleConnection, long latencyMs) {
        if (staleConnection && isConnectionClosed(error)) {
            return noAnswer(
                    FailureKind.STALE_CONNECTION,
                    "the keep-alive connection had been closed by the gateway before the call was read: "
                            + describe(error),
                    latencyMs);
        }
        if (isNotSent(error)) {
            return noAnswer(FailureKind.NOT_SENT, "could not connect to the gateway: " + describe(error), latencyMs);
        }
        if (error instanceof java.util.concurrent.TimeoutException
                || error instanceof io.smallrye.mutiny.TimeoutException) {
            return noAnswer(FailureKind.TIMED_OUT, "the gateway did not answer in time", latencyMs);
        }
        if (error instanceof BoundedBody.BodyTooLargeException) {
            return noAnswer(FailureKind.INVALID_OUTPUT, "the gateway's answer was " + error.getMessage(), latencyMs);
        }
        return noAnswer(FailureKind.UPSTREAM, "the gateway's answer broke off: " + describe(error), latencyMs);
    }

    /** A connection closed or reset under the call (Vert.x's "Connection was closed", a reset by the peer). */
    private static boolean isConnectionClosed(Throwable error) {
        if (error instanceof io.vertx.core.http.HttpClosedException || error instanceof IOException) {
            return true;
        }
        String message = String.valueOf(error.getMessage());
        return message.contains("Connection was closed") || message.contains("Connection reset");
    }

    /** True for failures that happen before a request can have left this process. */
    static boolean isNotSent(Throwable error) {
        if (error instanceof ConnectException
                || error instanceof ConnectTimeoutException
                || error instanceof UnknownHostException
                || error instanceof NoRouteToHostException) {
            return true;
        }
        // Vert.x reports a pool that could not hand out a connection in time as a TimeoutException with this text.
        String message = error.getMessage();
        return error instanceof java.util.concurrent.TimeoutException
                && message != null
                && message.contains("getting a connection");
    }

    private static String describe(Throwable error) {
        String message = error.getMessage();
        return error.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    /** An HTTP answer that failed, with its body's text cut to what an event keeps. */
    private Failed failed(int status, String text, long latencyMs) {
        return new Failed(status, text.length() > keepBodyChars ? text.substring(0, keepBodyChars) : text, latencyMs);
    }

    /**
     * An HTTP answer that failed, as its {@link GatewayFailure} keeps it: its status, its body's text as far as events
     * keep it, and its latency.
     */
    private record Failed(int status, String keptText, long latencyMs) {

        /** A failure without a {@code Retry-After}: every kind but the 429's. */
        GatewayAnswer as(FailureKind kind, String message) {
            return as(kind, message, null);
        }

        GatewayAnswer as(FailureKind kind, String message, Duration retryAfter) {
            return new GatewayAnswer.Failure(
                    new GatewayFailure(kind, message, status, keptText, Optional.ofNullable(retryAfter)), latencyMs);
        }
    }

    /** A call that got no HTTP answer. */
    private static GatewayAnswer noAnswer(FailureKind kind, String message, long latencyMs) {
        return new GatewayAnswer.Failure(GatewayFailure.noAnswer(kind, message), latencyMs);
    }

    /** A {@code Retry-After} value in seconds or as an HTTP date, as a delay from {@code now}. */
    static Optional<Duration> parseRetryAfter(String value, Instant now) {
        if (value == null || value.isBlank()) {
            return Optional.empty();
        }
        String trimmed = value.trim();
        try {
            long seconds = Long.parseLong(trimmed);
            return seconds < 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(seconds));
        } catch (NumberFormatException notSeconds) {
            try {
                Instant at = ZonedDateTime.parse(trimmed, DateTimeFormatter.RFC_1123_DATE_TIME)
                        .toInstant();
                Duration delay = Duration.between(now, at);
                return Optional.of(delay.isNegative() ? Duration.ZERO : delay);
            } catch (DateTimeParseException notADate) {
                return Optional.empty();
            }
        }
    }

    private static boolean isHtml(String contentType, byte[] body) {
        if (contentType != null && contentType.toLowerCase(Locale.ROOT).contains("text/html")) {
            return true;
        }
        int first = 0;
        while (first < body.length && first < 1024 && Character.isWhitespace(body[first])) {
            first++;
        }
        String start = new String(body, first, Math.min(body.length - first, 14), StandardCharsets.ISO_8859_1);
        return start.regionMatches(true, 0, "<!doctype html", 0, 14) || start.regionMatches(true, 0, "<html", 0, 5);
    }

    private Optional<String> errorMessage(String text) {
        try {
            JsonNode error = mapper.readTree(text).path("error");
            if (error.isTextual()) {
                return Optional.of(error.asText());
            }
            return Optional.ofNullable(textOrNull(error.get("message")));
        } catch (Exception e) {
            return Optional.empty();
        }
    }

    private String errorCode(String text) {
        try {
            return textOrNull(mapper.readTree(text).path("error").get("code"));
        } catch (Exception e) {
            return null;
        }
    }

    private static String textOrNull(JsonNode node) {
        return node != null && node.isTextual() && !node.asText().isEmpty() ? node.asText() : null;
    }
}
