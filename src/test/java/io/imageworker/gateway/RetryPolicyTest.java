package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.support.RetrySettings;
import io.imageworker.testing.TestConfig;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class RetryPolicyTest {

    private final RetryPolicy policy = new RetryPolicy(TestConfig.settings(
            RetrySettings.class,
            Map.of(
                    "image-worker.retry.max-rate-limited-attempts", "4",
                    "image-worker.retry.unknown-outcome-retries", "1",
                    "image-worker.retry.initial-backoff", "1s",
                    "image-worker.retry.max-backoff", "8s",
                    "image-worker.retry.request-deadline", "5m")));

    private static GatewayFailure failure(FailureKind kind) {
        return GatewayFailure.noAnswer(kind, kind.name());
    }

    /** The next backoff after a failure of {@code kind}, with the attempts so far and no time spent. */
    private Optional<Duration> next(FailureKind kind, int rateLimitedAttempts, int unknownOutcomes) {
        return policy.next(failure(kind), rateLimitedAttempts, unknownOutcomes, Duration.ZERO);
    }

    @Test
    void retriesAfterRetryAfterSeconds() {
        GatewayFailure limited =
                new GatewayFailure(FailureKind.RATE_LIMITED, "429", 429, "", Optional.of(Duration.ofSeconds(3)));

        assertThat(policy.next(limited, 1, 0, Duration.ZERO)).contains(Duration.ofSeconds(3));
    }

    @Test
    void retriesRateLimitedAndUnsentCallsUpToTheConfiguredAttempts() {
        assertThat(next(FailureKind.RATE_LIMITED, 3, 0)).isPresent();
        assertThat(next(FailureKind.NOT_SENT, 3, 0)).isPresent();
        assertThat(next(FailureKind.RATE_LIMITED, 4, 0)).isEmpty();
    }

    @Test
    void retriesAnUnknownOutcomeOnlyOnceByDefault() {
        assertThat(next(FailureKind.TIMED_OUT, 0, 1)).isPresent();
        assertThat(next(FailureKind.UPSTREAM, 0, 2)).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(
            value = FailureKind.class,
            names = {"REJECTED", "INVALID_OUTPUT", "REFUSED", "UNAUTHORIZED", "MISCONFIGURED"})
    void neverRetriesABilledRefusalOrAFaultThatRepeats(FailureKind kind) {
        assertThat(next(kind, 0, 0)).isEmpty();
    }

    @Test
    void givesUpWhenTheRequestDeadlineWouldPass() {
        GatewayFailure limited =
                new GatewayFailure(FailureKind.RATE_LIMITED, "429", 429, "", Optional.of(Duration.ofSeconds(30)));

        assertThat(policy.next(limited, 1, 0, Duration.ofMinutes(4).plusSeconds(45)))
                .isEmpty();
    }

    @RepeatedTest(20)
    void backOffIsFullJitterUnderAnExponentialCeiling() {
        assertThat(policy.backoff(1)).isBetween(Duration.ZERO, Duration.ofSeconds(1));
        assertThat(policy.backoff(3)).isBetween(Duration.ZERO, Duration.ofSeconds(4));
        assertThat(policy.backoff(30)).isBetween(Duration.ZERO, Duration.ofSeconds(8));
    }
}
