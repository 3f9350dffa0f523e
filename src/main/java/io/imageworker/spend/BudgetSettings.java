package io.imageworker.spend;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/**
 * The spend guard ({@code image-worker.budget.*}, {@code IMAGE_WORKER_BUDGET_*}): an optional cap on gateway calls
 * that may be billed, per time window, for the fleet and per producer. Read by {@link BudgetGuard}, the budget log of
 * {@code messaging.sidetopics}, the read-ahead and the console; the topic the replicas share is {@code
 * topic.budget}.
 */
@ConfigMapping(prefix = "image-worker.budget")
public interface BudgetSettings {
    /**
     * Most gateway calls that may be billed (answered 2xx, refused after work, or of unknown fate) in one window,
     * for all the replicas that share {@code topic.budget} together; empty means no cap. A call takes its place
     * before it is sent; one refused before any work gives it back.
     */
    Optional<Integer> maxCalls();

    /**
     * Length of the window the cap applies to. Windows are aligned on the epoch (with 1h, each starts on the
     * hour, UTC), so that every replica agrees on them without talking to the others.
     */
    @WithDefault("1h")
    Duration window();

    /** Price of one image call in quota units (500000 = 1 dollar), to report spend in metrics; 0 = unknown. */
    @WithDefault("0")
    long pricePerCall();

    /** Over the cap: {@code pause} waits for the next window, {@code fail} ends the request BUDGET_EXCEEDED. */
    @WithDefault("pause")
    Action onExceeded();

    /**
     * Caps of single producers (contract v1.2, {@code IMAGE_WORKER_BUDGET_PER_PRODUCER}): {@code
     * name=calls/window,...}, each the most calls that may be billed for that producer's requests per window of its
     * own, for the whole fleet, on top of {@link #maxCalls()}; shared through {@code topic.budget} like the fleet's
     * cap. Empty: no producer has a cap of its own ({@link io.imageworker.config.ProducerBudgets}).
     */
    Optional<String> perProducer();

    /** What the spend guard does over its cap. */
    enum Action {
        /** Hold requests until the window allows another call. */
        pause,
        /** Fail the request with {@code BUDGET_EXCEEDED}. */
        fail
    }
}
