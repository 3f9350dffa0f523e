package io.imageworker.contract;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The one event that ends a request: {@link Completed} or {@link Failed}. The same value is written as the request's
 * result document, so a redelivered or duplicated request gets it again without a gateway call.
 */
public sealed interface TerminalEvent permits TerminalEvent.Completed, TerminalEvent.Failed {

    /** The request this event ends. */
    String requestId();

    /**
     * The request's {@code producer} (contract v1.2) when it named a valid one; null (absent from the event)
     * otherwise, so that a consumer of an earlier contract sees what it always saw.
     */
    String producer();

    /** The CloudEvents type of this event. */
    @JsonIgnore
    String ceType();

    /**
     * {@code image-completed}: the image is stored. With {@code count} above 1 (contract v1.1), {@code images} holds
     * every stored variant in call order, {@code image} the first of them, and {@code variants} the tally; both are
     * absent otherwise, so that a consumer of contract v1 sees what it always saw.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Completed(
            String requestId,
            String operation,
            StoredImage image,
            List<StoredImage> images,
            VariantTally variants,
            SizeReport size,
            int attempts,
            Billing billing,
            Timings timings,
            Map<String, String> metadata,
            String producer)
            implements TerminalEvent {
        @Override
        public String ceType() {
            return "image.completed";
        }
    }

    /**
     * {@code image-failed}: the request ended without an image. With {@code count} above 1, every variant failed,
     * {@code error} is the last one's and {@code variants} the tally (absent otherwise).
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Failed(
            String requestId,
            String operation,
            Error error,
            VariantTally variants,
            SizeReport size,
            int attempts,
            Billing billing,
            Timings timings,
            Map<String, String> metadata,
            String producer)
            implements TerminalEvent {
        @Override
        public String ceType() {
            return "image.failed";
        }
    }

    /** Of the variants asked for ({@code count}), how many were stored and how many failed. */
    record VariantTally(int requested, int delivered, int failed) {}

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
