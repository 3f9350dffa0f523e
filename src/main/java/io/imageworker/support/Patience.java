package io.imageworker.support;

import io.imageworker.config.WorkerConfig;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Retries of operations that cost nothing (storage, downloads, publishing), with Mutiny's exponential back-off and
 * jitter, for at most {@code retry.infrastructure-patience}.
 */
@ApplicationScoped
public class Patience {

    private final Duration patience;
    private final Duration firstDelay;
    private final Duration longestDelay;

    @Inject
    Patience(WorkerConfig config) {
        this(
                config.retry().infrastructurePatience(),
                config.retry().patienceFirstDelay(),
                config.retry().patienceMaxDelay());
    }

    /** Retries for at most {@code patience}, waiting from {@code firstDelay} up to {@code longestDelay}. */
    public Patience(Duration patience, Duration firstDelay, Duration longestDelay) {
        this.patience = patience;
        this.firstDelay = firstDelay;
        this.longestDelay = longestDelay;
    }

    /** {@code operation}, re-subscribed after each failure that {@code retryable} accepts, until patience ends. */
    public <T> Uni<T> retry(Uni<T> operation, Predicate<Throwable> retryable) {
        return operation
                .onFailure(retryable)
                .retry()
                .withBackOff(firstDelay, longestDelay)
                .withJitter(0.5)
                .expireIn(patience.toMillis())
                // Mutiny reports exhausted retries as its own exception: give callers the failure that persisted.
                .onFailure(Patience::isExhausted)
                .transform(Throwable::getCause);
    }

    /** {@code operation}, retried after any failure. */
    public <T> Uni<T> retry(Uni<T> operation) {
        return retry(operation, failure -> true);
    }

    /**
     * {@code next}, subscribed after {@code delay} on Mutiny's timer: waiting holds no thread and no permit. A delay
     * of zero or less is taken as one millisecond (Mutiny refuses a zero delay).
     */
    public static <T> Uni<T> after(Duration delay, Supplier<Uni<T>> next) {
        Duration wait = delay.isNegative() || delay.isZero() ? Duration.ofMillis(1) : delay;
        return Uni.createFrom().voidItem().onItem().delayIt().by(wait).onItem().transformToUni(ignored -> next.get());
    }

    private static boolean isExhausted(Throwable error) {
        return error instanceof IllegalStateException
                && error.getCause() != null
                && String.valueOf(error.getMessage()).startsWith("Retries exhausted");
    }
}
