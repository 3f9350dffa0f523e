package io.imageworker.testing.gateway;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Time the simulated upstream takes before answering an image call: fixed, or uniform between {@code min} and
 * {@code max} inclusive. Applied with timers, never a sleeping thread.
 */
public record Latency(Duration min, Duration max) {

    public Latency {
        Objects.requireNonNull(min, "min");
        Objects.requireNonNull(max, "max");
        if (min.isNegative() || max.compareTo(min) < 0) {
            throw new IllegalArgumentException("latency needs 0 <= min <= max, got " + min + ".." + max);
        }
    }

    /** No latency: answer as soon as the request is read. */
    public static Latency none() {
        return new Latency(Duration.ZERO, Duration.ZERO);
    }

    /** The same latency for every call. */
    public static Latency fixed(Duration latency) {
        return new Latency(latency, latency);
    }

    /** The same latency for every call, in milliseconds. */
    public static Latency fixedMillis(long millis) {
        return fixed(Duration.ofMillis(millis));
    }

    /** A latency drawn uniformly between {@code min} and {@code max} for each call. */
    public static Latency uniform(Duration min, Duration max) {
        return new Latency(min, max);
    }

    /** One draw, in milliseconds. */
    long sampleMillis() {
        long lo = min.toMillis();
        long hi = max.toMillis();
        return lo == hi ? lo : ThreadLocalRandom.current().nextLong(lo, hi + 1);
    }
}
