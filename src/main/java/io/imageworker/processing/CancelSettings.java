package io.imageworker.processing;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * Cancellation (contract v1.2, {@code image-worker.cancel.*}, {@code IMAGE_WORKER_CANCEL_*}), on when {@code
 * topic.cancel} names a topic: how long a cancel is remembered. Read by {@link Cancellations}.
 */
@ConfigMapping(prefix = "image-worker.cancel")
public interface CancelSettings {
    /**
     * How long a cancel is remembered, from its record's time ({@code IMAGE_WORKER_CANCEL_RETENTION}): a request
     * that arrives within it is cancelled; after it the cancel is forgotten. Also how far back a worker that
     * starts reads the cancel topic.
     */
    @WithDefault("1h")
    Duration retention();
}
