package io.imageworker.support;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * The retry policy per outcome class, and the total budget of one request ({@code image-worker.retry.*}, {@code
 * IMAGE_WORKER_RETRY_*}): read by the gateway's retries ({@code gateway.RetryPolicy}), by {@link Patience} for the
 * operations that cost nothing, and by the results' transactions.
 */
@ConfigMapping(prefix = "image-worker.retry")
public interface RetrySettings {
    /** Attempts of a call refused with 429 or never sent, before {@code RATE_LIMITED}/{@code TIMEOUT}. */
    @WithDefault("6")
    int maxRateLimitedAttempts();

    /** Extra attempts after an outcome whose billing is unknown (timeout after sending, 5xx, reset). */
    @WithDefault("1")
    int unknownOutcomeRetries();

    /** First back-off delay. */
    @WithDefault("1s")
    Duration initialBackoff();

    /** Longest back-off delay. */
    @WithDefault("60s")
    Duration maxBackoff();

    /** Total time one request may spend on retries before it fails with its last error. */
    @WithDefault("15m")
    Duration requestDeadline();

    /**
     * How long storage operations, downloads and result publishing (which cost nothing) are retried before the
     * request fails with {@code STORAGE_ERROR}, or, for publishing, before the worker stops consuming.
     */
    @WithDefault("2m")
    Duration infrastructurePatience();

    /** First delay between two tries of a storage, download or publishing operation (then doubled, jittered). */
    @WithDefault("200ms")
    Duration patienceFirstDelay();

    /** Longest delay between two tries of a storage, download or publishing operation. */
    @WithDefault("10s")
    Duration patienceMaxDelay();
}
