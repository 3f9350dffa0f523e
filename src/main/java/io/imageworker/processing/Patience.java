package io.imageworker.processing;

import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.function.Predicate;

/**
 * Retries of operations that cost nothing (storage, downloads, publishing), with Mutiny's exponential back-off and
 * jitter, for at most a configured time.
 */
public final class Patience {

    private static final Duration FIRST_DELAY = Duration.ofMillis(200);
    private static final Duration LONGEST_DELAY = Duration.ofSeconds(10);

    private final Duration patience;

    /** Retries for at most {@code patience}. */
    public Patience(Duration patience) {
        this.patience = patience;
    }

    /** {@code operation}, re-subscribed after each failure that {@code retryable} accepts, until patience ends. */
    public <T> Uni<T> retry(Uni<T> operation, Predicate<Throwable> retryable) {
        return operation
                .onFailure(retryable)
                .retry()
                .withBackOff(FIRST_DELAY, LONGEST_DELAY)
                .withJitter(0.5)
                .expireIn(patience.toMillis())
                // Mutiny reports exhausted retries as its own exception: give callers the failure that persisted.
                .onFailure(Patience::isExhausted)
                .transform(Throwable::getCause);
    }

    /**
     * {@code next}, subscribed after {@code delay} on Mutiny's timer: waiting holds no thread and no permit. A delay
     * of zero or less is taken as one millisecond (Mutiny refuses a zero delay).
     */
    public static <T> Uni<T> after(Duration delay, java.util.function.Supplier<Uni<T>> next) {
        Duration wait = delay.isNegative() || delay.isZero() ? Duration.ofMillis(1) : delay;
        return Uni.createFrom().voidItem().onItem().delayIt().by(wait).onItem().transformToUni(ignored -> next.get());
    }

    private static boolean isExhausted(Throwable error) {
        return error instanceof IllegalStateException
                && error.getCause() != null
                && String.valueOf(error.getMessage()).startsWith("Retries exhausted");
    }

    /** {@code operation}, retried after any failure. */
    public <T> Uni<T> retry(Uni<T> operation) {
        return retry(operation, failure -> true);
    }
}
