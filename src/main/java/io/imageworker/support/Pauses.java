package io.imageworker.support;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The worker's pauses by design: intake paused on a dead token or a wrong address, requests held by the spend guard.
 * Either may last hours (a token is fixed on Monday, a budget window is an hour long) and holds records unacknowledged
 * the whole time, which is no sign of a stuck worker. This is the clock that tells the two apart: the total time spent
 * paused, so that a record's age can be counted without it ({@code messaging.offsets.PauseAwareCommit}).
 */
@ApplicationScoped
public class Pauses {

    /** Why the worker pauses. */
    public enum Reason {
        /** The gateway refuses the token or the address is wrong: intake waits for it to be fixed. */
        GATEWAY_FAULT,
        /** The spend guard holds requests until its window allows another call. */
        BUDGET
    }

    private final LongSupplier clock;
    private final Map<Reason, Integer> holders = new EnumMap<>(Reason.class);
    private long pausedNanos;
    private long pausedSince;
    private long endedAt;
    private boolean ever;

    Pauses() {
        this(System::nanoTime);
    }

    /** Pauses on their own clock (nanoseconds, monotonic), for tests. */
    public Pauses(LongSupplier clock) {
        this.clock = clock;
    }

    /** One more holder of a pause for {@code reason}; each is ended by one {@link #end(Reason)}. */
    public synchronized void begin(Reason reason) {
        if (holders.isEmpty()) {
            pausedSince = clock.getAsLong();
            ever = true;
        }
        holders.merge(reason, 1, Integer::sum);
    }

    /** One holder of a pause for {@code reason} is done; the pause ends with the last holder of the last reason. */
    public synchronized void end(Reason reason) {
        Integer count = holders.get(reason);
        if (count == null) {
            return;
        }
        if (count > 1) {
            holders.put(reason, count - 1);
            return;
        }
        holders.remove(reason);
        if (holders.isEmpty()) {
            endedAt = clock.getAsLong();
            pausedNanos += endedAt - pausedSince;
        }
    }

    /** The reasons the worker pauses for now; empty when it does not. */
    public synchronized Set<Reason> active() {
        return holders.isEmpty() ? EnumSet.noneOf(Reason.class) : EnumSet.copyOf(holders.keySet());
    }

    /**
     * Nanoseconds spent paused, for any reason, since this bean was created, up to now: the difference of two readings
     * is how much of the time between them was a pause.
     */
    public synchronized long pausedNanos() {
        return holders.isEmpty() ? pausedNanos : pausedNanos + clock.getAsLong() - pausedSince;
    }

    /** Whether the worker pauses now, or did less than {@code window} ago. */
    public synchronized boolean pausedWithin(java.time.Duration window) {
        return !holders.isEmpty() || ever && clock.getAsLong() - endedAt < window.toNanos();
    }

    /** Now, on the clock of {@link #pausedNanos()}. */
    public long now() {
        return clock.getAsLong();
    }
}
