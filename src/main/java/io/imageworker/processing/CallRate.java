package io.imageworker.processing;

import java.util.OptionalDouble;

/**
 * The rate at which gateway calls left this replica lately: the calls started in the last {@link #WINDOW_SECONDS}
 * seconds, counted in one-second buckets (a fixed array: telling a call and reading the rate cost the same however
 * many calls there are). What a queued request's estimate divides its position by.
 *
 * <p>A rate is only given from calls that left: none in the window, none given (no number is invented). Calls that
 * begin after a quiet window are counted over the time since the first of them (at least {@link #LEAST_SPAN_MILLIS}),
 * not over the whole window, so that a worker that just started calling is not taken for a slow one.
 */
public final class CallRate {

    /** How far back calls are counted. */
    public static final int WINDOW_SECONDS = 60;

    /** The shortest span a rate is counted over: the first burst of calls is not taken for a rate of its own. */
    static final long LEAST_SPAN_MILLIS = 1000;

    private static final long WINDOW_MILLIS = WINDOW_SECONDS * 1000L;

    private final long[] second = new long[WINDOW_SECONDS];
    private final int[] calls = new int[WINDOW_SECONDS];
    /** When the calls counted now began to leave (the first after a window with none). */
    private long since = Long.MIN_VALUE;

    private long last = Long.MIN_VALUE;

    /** A call left at {@code nowMillis} (epoch milliseconds). */
    public synchronized void started(long nowMillis) {
        if (last == Long.MIN_VALUE || nowMillis - last >= WINDOW_MILLIS) {
            since = nowMillis;
        }
        last = Math.max(last, nowMillis);
        long at = nowMillis / 1000;
        int bucket = (int) Math.floorMod(at, (long) WINDOW_SECONDS);
        if (second[bucket] != at) {
            second[bucket] = at;
            calls[bucket] = 0;
        }
        calls[bucket]++;
    }

    /** Calls per second over the window at {@code nowMillis}; empty when no call left in it. */
    public synchronized OptionalDouble perSecond(long nowMillis) {
        long now = nowMillis / 1000;
        long counted = 0;
        for (int i = 0; i < WINDOW_SECONDS; i++) {
            if (second[i] > now - WINDOW_SECONDS && second[i] <= now) {
                counted += calls[i];
            }
        }
        if (counted == 0) {
            return OptionalDouble.empty();
        }
        long span = Math.max(LEAST_SPAN_MILLIS, Math.min(WINDOW_MILLIS, nowMillis - since));
        return OptionalDouble.of(counted * 1000.0 / span);
    }
}
