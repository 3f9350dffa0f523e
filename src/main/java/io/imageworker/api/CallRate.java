package io.imageworker.api;

import java.time.Duration;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * The rate at which gateway calls left this replica lately: the calls started over a window that spans calls of any
 * length (twice the gateway's timeout, at least a minute: {@link #windowFor}), counted in {@link #BUCKETS} buckets (a
 * fixed array: telling a call and reading the rate cost the same however many calls there are). What a queued
 * request's estimate divides its position by.
 *
 * <p>Why the window follows the gateway's timeout: calls take 30 s to 3 minutes. Over one minute a busy replica with
 * four slots and two-minute calls may see no call leave at all (and say it has no rate), or see its four slots refilled
 * at once after a quiet minute and take that burst for the pace of a replica that just started (four calls in a second:
 * a rate 100 times the truth). A window of two of the longest calls always holds the refills of every slot.
 *
 * <p>A rate is only given from calls that left, and once the length of a finished call is known: none in the window, or
 * none finished yet, none given (no number is invented). Calls that begin after a quiet window are counted over the time
 * since the first of them, but over at least the mean length of the calls that finished lately ({@link #finished}) and
 * {@link #LEAST_SPAN_MILLIS}: a first burst, one call per slot, is one call length's worth of calls, not a rate of its
 * own.
 */
public final class CallRate {

    /** The window of the rate when the gateway's calls are short. */
    public static final Duration LEAST_WINDOW = Duration.ofMinutes(1);

    /** How many buckets the window is counted in. */
    static final int BUCKETS = 60;

    /** The shortest span a rate is counted over. */
    static final long LEAST_SPAN_MILLIS = 1000;

    /** How many of the calls that finished last the mean call length is taken over. */
    static final int LENGTHS = 16;

    private final long windowMillis;
    private final long bucketMillis;
    private final long[] bucketOf = new long[BUCKETS];
    private final int[] calls = new int[BUCKETS];
    private final long[] lengths = new long[LENGTHS];
    private int lengthsKnown;
    private int nextLength;
    /** When the calls counted now began to leave (the first after a window with none). */
    private long since = Long.MIN_VALUE;

    private long last = Long.MIN_VALUE;

    /** A rate over {@link #LEAST_WINDOW}. */
    public CallRate() {
        this(LEAST_WINDOW);
    }

    /** A rate over {@code window} (whole buckets of at least a second: {@link #BUCKETS} of them). */
    public CallRate(Duration window) {
        long bucket = Math.max(1000, (window.toMillis() + BUCKETS - 1) / BUCKETS);
        this.bucketMillis = (bucket + 999) / 1000 * 1000;
        this.windowMillis = bucketMillis * BUCKETS;
    }

    /** The window for a gateway whose calls may take up to {@code timeout}: two such calls, at least a minute. */
    public static Duration windowFor(Duration timeout) {
        Duration two = timeout.multipliedBy(2);
        return two.compareTo(LEAST_WINDOW) > 0 ? two : LEAST_WINDOW;
    }

    /** How far back calls are counted. */
    public Duration window() {
        return Duration.ofMillis(windowMillis);
    }

    /** A call left at {@code nowMillis} (epoch milliseconds). */
    public synchronized void started(long nowMillis) {
        if (last == Long.MIN_VALUE || nowMillis - last >= windowMillis) {
            since = nowMillis;
        }
        last = Math.max(last, nowMillis);
        long at = Math.floorDiv(nowMillis, bucketMillis);
        int bucket = (int) Math.floorMod(at, (long) BUCKETS);
        if (bucketOf[bucket] != at) {
            bucketOf[bucket] = at;
            calls[bucket] = 0;
        }
        calls[bucket]++;
    }

    /** A request's calls, the first of which left {@code lengthMillis} ago, finished. */
    public synchronized void finished(long lengthMillis) {
        lengths[nextLength] = Math.max(0, lengthMillis);
        nextLength = (nextLength + 1) % LENGTHS;
        lengthsKnown = Math.min(LENGTHS, lengthsKnown + 1);
    }

    /** Calls per second over the window at {@code nowMillis}; empty when none left in it or none finished yet. */
    public synchronized OptionalDouble perSecond(long nowMillis) {
        if (lengthsKnown == 0) {
            return OptionalDouble.empty();
        }
        long now = Math.floorDiv(nowMillis, bucketMillis);
        long counted = 0;
        for (int i = 0; i < BUCKETS; i++) {
            if (bucketOf[i] > now - BUCKETS && bucketOf[i] <= now) {
                counted += calls[i];
            }
        }
        if (counted == 0) {
            return OptionalDouble.empty();
        }
        long sinceFirst = Math.max(nowMillis - since, meanLength());
        long span = Math.max(LEAST_SPAN_MILLIS, Math.min(windowMillis, sinceFirst));
        return OptionalDouble.of(counted * 1000.0 / span);
    }

    /** The mean length of the calls that finished last (at most {@link #LENGTHS}); empty when none has. */
    public synchronized OptionalLong meanLengthMillis() {
        return lengthsKnown == 0 ? OptionalLong.empty() : OptionalLong.of(meanLength());
    }

    private long meanLength() {
        long sum = 0;
        for (int i = 0; i < lengthsKnown; i++) {
            sum += lengths[i];
        }
        return sum / lengthsKnown;
    }
}
