package io.imageworker.gateway;

import java.time.Duration;
import java.util.Optional;

/**
 * A gateway call that did not give an image.
 *
 * @param kind what went wrong, which fixes its cost and error code
 * @param message a human-readable cause, never containing the API key
 * @param status the HTTP status, when an answer came
 * @param body the start of the gateway's answer, when one came
 * @param retryAfter the delay a 429 asked for
 */
public record GatewayFailure(
        FailureKind kind, String message, Integer status, String body, Optional<Duration> retryAfter) {

    /** A failure with no answer from the gateway. */
    public static GatewayFailure noAnswer(FailureKind kind, String message) {
        return new GatewayFailure(kind, message, null, null, Optional.empty());
    }
}
