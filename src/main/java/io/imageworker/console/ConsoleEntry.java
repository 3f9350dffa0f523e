package io.imageworker.console;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * One request as the console shows it: what the last of its events said (or, for a request typed in the console, that
 * it was sent). Never the store's address or a presigned URL: an image is named by its index, and the console streams
 * it from the store itself ({@link ConsoleRoutes}); {@code bucket} and {@code key} stay on the server.
 *
 * @param seq the feed's number of this version of the entry: higher is later ({@link ConsoleFeed})
 * @param state {@code submitted} (sent from the console, no event yet), {@code calling} ({@code image.started}),
 *     {@code completed}, {@code failed} or {@code cancelled} (failed with {@code CANCELLED})
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ConsoleEntry(
        long seq,
        String requestId,
        String producer,
        String state,
        String operation,
        Integer attempts,
        Billing billing,
        Timings timings,
        List<Image> images,
        Size size,
        Error error,
        Variants variants,
        long updatedAt) {

    /** The states that end a request: an entry in one of them is not replaced by a later {@code calling}. */
    static boolean terminal(String state) {
        return "completed".equals(state) || "failed".equals(state) || "cancelled".equals(state);
    }

    /** This entry numbered {@code seq} in the feed. */
    ConsoleEntry numbered(long seq) {
        return new ConsoleEntry(
                seq, requestId, producer, state, operation, attempts, billing, timings, images, size, error, variants,
                updatedAt);
    }

    /**
     * This entry, with what it does not say taken from {@code before}: a request's producer and the size it asked for,
     * known when it was sent from the console, are not in its {@code image.started} (a result says them again).
     */
    ConsoleEntry over(ConsoleEntry before) {
        return new ConsoleEntry(
                seq,
                requestId,
                producer != null ? producer : before.producer,
                state,
                operation != null ? operation : before.operation,
                attempts,
                billing,
                timings,
                images,
                size != null ? size : before.size,
                error,
                variants != null ? variants : before.variants,
                updatedAt);
    }

    /**
     * What the entry holds in the heap, counted generously (the records, their headers and references, each string's
     * characters as two bytes and its own 40): the feed's bound in bytes adds these up. The heap test
     * (ConsoleFeedHeapTest) checks the sum against the heap measured.
     */
    @JsonIgnore
    long bytes() {
        long bytes = 160 + chars(requestId) + chars(producer) + chars(state) + chars(operation);
        if (billing != null) {
            bytes += 32;
        }
        if (timings != null) {
            bytes += 64 + chars(timings.receivedAt) + chars(timings.startedAt) + chars(timings.completedAt);
        }
        if (images != null) {
            bytes += 56;
            for (Image image : images) {
                bytes += 80 + chars(image.bucket) + chars(image.key) + chars(image.contentType) + chars(image.sha256);
            }
        }
        if (size != null) {
            bytes += 40 + chars(size.requested) + chars(size.sent) + chars(size.actual);
        }
        if (error != null) {
            bytes += 48 + chars(error.code) + chars(error.message) + chars(error.gatewayBody);
        }
        if (variants != null) {
            bytes += 32;
        }
        return bytes;
    }

    private static long chars(String text) {
        return text == null ? 0 : 48 + 2L * text.length();
    }

    /** Calls sent, billed, and of unknown fate. */
    public record Billing(int calls, int billed, int unknown) {}

    /** When the request was received, first called and ended, and how long its calls and its storing took. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Timings(
            String receivedAt, String startedAt, String completedAt, Long queuedMs, Long gatewayMs, Long storeMs) {}

    /** A stored image: where it lies (kept on the server), its real format, size and checksum. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Image(
            @JsonIgnore String bucket,
            String key,
            String contentType,
            Integer width,
            Integer height,
            Long bytes,
            String sha256) {}

    /** The size asked, sent and returned. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Size(String requested, String sent, String actual, Boolean matched) {}

    /** Why it failed: the code, the message, and the gateway's status and body (cut to {@link #BODY_CHARS}). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Error(String code, String message, Boolean retryable, Integer gatewayStatus, String gatewayBody) {
        /** The most characters of a gateway's error body kept. */
        static final int BODY_CHARS = 2048;
    }

    /** Variants requested, delivered and failed ({@code count} above 1). */
    public record Variants(int requested, int delivered, int failed) {}
}
