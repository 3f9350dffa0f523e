package io.imageworker.contract;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;
import java.util.Map;

/**
 * {@code image.started} on {@code image-status} (contract v1.1): a gateway call of a request has left, the first of
 * its attempt. A hint for progress displays, never required for correctness.
 *
 * @param requestId the request
 * @param operation generate or edit
 * @param attempt the call's attempt number within its variant (1: the first call, 2: the first retry, ...)
 * @param variant the variant the call is for (1 to {@code count}), absent for a request without {@code count}
 * @param queuedMs how long the call waited for its slot (the gateway guard, the spend guard, the concurrency limit)
 * @param startedAt when it left
 * @param metadata the request's metadata, unchanged
 * @param producer the request's {@code producer} when it named a valid one, as the result events echo it (always, the
 *     topic's producer, with {@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}); null (absent from the event) otherwise
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ImageStarted(
        String requestId,
        String operation,
        int attempt,
        Integer variant,
        long queuedMs,
        Instant startedAt,
        Map<String, String> metadata,
        String producer) {

    /** The CloudEvents type. */
    public static final String CE_TYPE = "image.started";
}
