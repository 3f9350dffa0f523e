package io.imageworker.support;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.BackPressureFailure;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.common.errors.RetriableException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkServiceException;

/**
 * Retries of operations that cost nothing (storage, downloads, publishing), with Mutiny's exponential back-off and
 * jitter, for at most {@code retry.infrastructure-patience}, and only after a failure that can heal
 * ({@link #isTransient}): an answer that says the request itself is wrong (a store's 4xx) ends the operation at once,
 * since asking again for minutes only holds the record, and its partition's commit, for nothing.
 */
@ApplicationScoped
public class Patience {

    private final Duration patience;
    private final Duration firstDelay;
    private final Duration longestDelay;

    @Inject
    Patience(RetrySettings retry) {
        this(retry.infrastructurePatience(), retry.patienceFirstDelay(), retry.patienceMaxDelay());
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

    /** {@code operation}, retried after each failure that can heal ({@link #isTransient}), until patience ends. */
    public <T> Uni<T> retry(Uni<T> operation) {
        return retry(operation, Patience::isTransient);
    }

    /**
     * Whether a failure of the store, the broker or the network may pass by itself: no answer (connection refused or
     * reset, a timeout), an answer saying the server is busy or broken (5xx, 408, 429), a failure the Kafka client
     * itself calls retriable, or a full send buffer. Everything else is not retried: a 4xx says the request is wrong
     * or not allowed (a bad key, access denied, no such bucket), and a failure of the worker's own code is a defect.
     */
    public static boolean isTransient(Throwable error) {
        Throwable failure = unwrapped(error);
        if (failure instanceof SdkServiceException service) {
            int status = service.statusCode();
            return status >= 500 || status == 408 || status == 429;
        }
        // ImageStore bounds each operation with Mutiny's ifNoItem(), whose TimeoutException is not the JDK's.
        return failure instanceof SdkClientException
                || failure instanceof io.smallrye.mutiny.TimeoutException
                || failure instanceof TimeoutException
                || failure instanceof IOException
                || failure instanceof UncheckedIOException
                || failure instanceof RetriableException
                || failure instanceof BackPressureFailure;
    }

    private static Throwable unwrapped(Throwable error) {
        Throwable failure = error;
        while ((failure instanceof CompletionException || failure instanceof ExecutionException)
                && failure.getCause() != null) {
            failure = failure.getCause();
        }
        return failure;
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
