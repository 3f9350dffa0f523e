package io.imageworker.turns;

import io.smallrye.mutiny.subscription.UniEmitter;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One run's claim on a place, through its states: waiting, granted (it holds a place), started (its work runs with
 * it), ended (the place given back, once), or gone (ended while waiting: a place is never given to it). The states are
 * what makes the turns cancel-safe: a caller that cancels as its place is given, or before its work starts, gives the
 * place back instead of leaving it with no one.
 */
final class Claim {
    private static final int WAITING = 0;
    private static final int GRANTED = 1;
    private static final int STARTED = 2;
    private static final int ENDED = 3;
    private static final int GONE = 4;

    private final AtomicInteger state = new AtomicInteger(WAITING);
    final String producer;
    /** Taking back a place given back for a while ({@link FairTurns.Turn#aside}): first of its producer, never held. */
    final boolean returning;
    /** Set under the turns' lock before it is queued. */
    UniEmitter<? super Boolean> emitter;

    Claim(String producer) {
        this(producer, false);
    }

    Claim(String producer, boolean returning) {
        this.producer = producer;
        this.returning = returning;
    }

    /** Gives it a place, under the turns' lock; false when it is gone. */
    boolean grant() {
        return state.compareAndSet(WAITING, GRANTED);
    }

    /** Tells its waiting caller it has its place (outside the lock: the caller's work may start on this thread). */
    void given() {
        emitter.complete(Boolean.TRUE);
    }

    /** Its work starts with the place; false when the run ended (cancelled) before. */
    boolean start() {
        return state.compareAndSet(GRANTED, STARTED);
    }

    /** The run ended, however: whether it held a place, which the caller gives back. */
    boolean end() {
        while (true) {
            int now = state.get();
            if (now == WAITING) {
                if (state.compareAndSet(WAITING, GONE)) {
                    return false;
                }
            } else if (now == GRANTED || now == STARTED) {
                if (state.compareAndSet(now, ENDED)) {
                    return true;
                }
            } else {
                return false;
            }
        }
    }
}
