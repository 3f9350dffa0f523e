package io.imageworker;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;
import java.util.Map;

/**
 * The one event that ends a request: {@link Completed} or {@link Failed}. The same value is written as the request's
 * result document, so a redelivered or duplicated request gets it again without a gateway call.
 */
public sealed interface TerminalEvent permits TerminalEvent.Completed, TerminalEvent.Failed {

    /** The request this event ends. */
    String requestId();

    /** The CloudEvents type of this event. */
    @JsonIgnore
    String ceType();

    /** {@code image-completed}: the image is stored. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Completed(
            String requestId,
            String operation,
            StoredImage image,
            SizeReport size,
            int attempts,
            Billing billing,
            Timings timings,
            Map<String, String> metadata)
            implements TerminalEvent {
        @Override
        public String ceType() {
            return "image.completed";
        }
    }

    /** {@code image-failed}: the request ended without an image. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Failed(
            String requestId,
            String operation,
            Error error,
            SizeReport size,
            int attempts,
            Billing billing,
            Timings timings,
            Map<String, String> metadata)
            implements TerminalEvent {
        @Override
        public String ceType() {
            return "image.failed";
        }
    }

    /** Why a request failed. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Error(ErrorCode code, String message, boolean retryable, Integer gatewayStatus, String gatewayBody) {}

    /** Where the image is and what it really is. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record StoredImage(
            String bucket,
            String key,
            String uri,
            String url,
            String contentType,
            int width,
            int height,
            long bytes,
            String sha256) {}

    /** The size asked for, the size sent, the size produced. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record SizeReport(String requested, String sent, String actual, Boolean matched) {}

    /** When the request was received, started and ended, and how long the gateway and the store took. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Timings(Instant receivedAt, Instant startedAt, Instant completedAt, Long gatewayMs, Long storeMs) {}
}
