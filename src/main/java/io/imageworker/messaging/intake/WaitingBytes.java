package io.imageworker.messaging.intake;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The bytes of the records of one lane that wait for their turn, bounded. A lane may be fed by more than one stream
 * (the normal lane by the request topic and, with parking on, the parked topic), so more than one taker may wait at
 * once: they wait in line and go on in the order they came, each as soon as its bytes fit (or nothing is held). With
 * one waiter's place only, a second taker took the first one's place and the first was never woken: its stream took
 * no record again, its consumer stayed paused, and the worker sat idle and healthy before a parked backlog.
 */
final class WaitingBytes {
    private final long bound;
    private final Deque<Taker> waiting = new ArrayDeque<>();
    private long held;

    WaitingBytes(long bound) {
        this.bound = bound;
    }

    /** Completes when {@code size} more bytes fit (or nothing is held) and no taker before it waits, holding them. */
    Uni<Void> take(long size) {
        return Uni.createFrom().emitter(emitter -> {
            Taker taker = new Taker(emitter, size);
            boolean now;
            synchronized (this) {
                now = waiting.isEmpty() && fits(size);
                if (now) {
                    held += size;
                } else {
                    waiting.addLast(taker);
                }
            }
            if (now) {
                emitter.complete(null);
            } else {
                emitter.onTermination(() -> {
                    List<Taker> next;
                    synchronized (this) {
                        // Gone before its turn (cancelled): the ones behind it may fit now.
                        waiting.remove(taker);
                        next = release();
                    }
                    next.forEach(Taker::go);
                });
            }
        });
    }

    /** {@code size} bytes went into progress or ended: the waiting takers that now fit go on, in their order. */
    void give(long size) {
        List<Taker> next;
        synchronized (this) {
            held -= size;
            next = release();
        }
        next.forEach(Taker::go);
    }

    synchronized long held() {
        return held;
    }

    /** Takers waiting now, for the tests. */
    synchronized int waiting() {
        return waiting.size();
    }

    private boolean fits(long size) {
        return held == 0 || held + size <= bound;
    }

    /** Under the lock: the takers at the head of the line whose bytes fit, their bytes held. */
    private List<Taker> release() {
        if (waiting.isEmpty() || !fits(waiting.peekFirst().size())) {
            // Called at every give, once per record going into progress: most of the time nobody waits.
            return List.of();
        }
        List<Taker> next = new ArrayList<>();
        while (!waiting.isEmpty() && fits(waiting.peekFirst().size())) {
            Taker taker = waiting.pollFirst();
            held += taker.size();
            next.add(taker);
        }
        return next;
    }

    /**
     * A taker waiting for its bytes: equal only to itself, its emitter being its own (the same size may wait twice,
     * and {@link Deque#remove(Object)} removes this one).
     */
    private record Taker(UniEmitter<? super Void> emitter, long size) {

        void go() {
            emitter.complete(null);
        }
    }
}
