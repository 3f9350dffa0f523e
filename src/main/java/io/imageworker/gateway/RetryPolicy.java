package io.imageworker.gateway;

import io.imageworker.support.RetrySettings;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Decides whether a failed gateway call is tried again, and after how long, by what the failed call cost. Every
 * gateway call is billed, so: calls that cannot have been billed (never sent, 429) are repeated with exponential
 * back-off and full jitter, honouring {@code Retry-After}; calls whose fate is unknown (timeout after sending, 5xx,
 * reset) at most {@code unknownOutcomeRetries} times; calls the gateway billed (2xx, moderation and parameter
 * refusals) never.
 */
@ApplicationScoped
public class RetryPolicy {

    private final RetrySettings config;

    /** A policy with the given settings. */
    @Inject
    public RetryPolicy(RetrySettings config) {
        this.config = config;
    }

    /**
     * The delay before the next attempt, or empty to give up.
     *
     * @param failure the last call's failure
     * @param freeAttempts attempts so far that cost nothing (never sent, 429), the last included
     * @param unknownAttempts attempts so far whose fate is unknown, the last included
     * @param spent time spent on the request since it started
     */
    public Optional<Duration> next(GatewayFailure failure, int freeAttempts, int unknownAttempts, Duration spent) {
        Optional<Duration> delay =
                switch (failure.kind()) {
                    // The gateway never read the call: send it again at once, on a new connection.
                    case STALE_CONNECTION ->
                        freeAttempts < config.maxRateLimitedAttempts() ? Optional.of(Duration.ZERO) : Optional.empty();
                    case NOT_SENT, RATE_LIMITED ->
                        freeAttempts < config.maxRateLimitedAttempts()
                                ? Optional.of(failure.retryAfter().orElseGet(() -> backoff(freeAttempts)))
                                : Optional.empty();
                    case TIMED_OUT, UPSTREAM ->
                        unknownAttempts <= config.unknownOutcomeRetries()
                                ? Optional.of(backoff(unknownAttempts))
                                : Optional.empty();
                    default -> Optional.empty();
                };
        return delay.filter(d -> spent.plus(d).compareTo(config.requestDeadline()) < 0);
    }

    /** Full jitter: a random delay between zero and {@code min(max, initial * 2^(attempt-1))}. */
    public Duration backoff(int attempt) {
        long initial = config.initialBackoff().toMillis();
        long cap = config.maxBackoff().toMillis();
        long ceiling = Math.min(cap, initial << Math.min(20, Math.max(0, attempt - 1)));
        return Duration.ofMillis(ThreadLocalRandom.current().nextLong(ceiling + 1));
    }
}
