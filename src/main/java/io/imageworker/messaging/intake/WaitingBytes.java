package io.imageworker.messaging.intake;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;

/** The bytes of the records of one lane that wait for their turn, bounded. */
final class WaitingBytes {
    private final long bound;
    private long held;
    private long asked;
    private UniEmitter<? super Void> waiter;

    WaitingBytes(long bound) {
        this.bound = bound;
    }

    /** Completes when {@code size} more bytes fit (or nothing is held), holding them; one caller at a time. */
    Uni<Void> take(long size) {
        return Uni.createFrom().emitter(emitter -> {
            boolean now;
            synchronized (this) {
                now = held == 0 || held + size <= bound;
                if (now) {
                    held += size;
                } else {
                    waiter = emitter;
                    asked = size;
                }
            }
            if (now) {
                emitter.complete(null);
            } else {
                emitter.onTermination(() -> {
                    synchronized (this) {
                        if (waiter == emitter) {
                            waiter = null;
                        }
                    }
                });
            }
        });
    }

    /** {@code size} bytes went into progress or ended: a waiting taker that now fits goes on. */
    void give(long size) {
        UniEmitter<? super Void> next = null;
        synchronized (this) {
            held -= size;
            if (waiter != null && (held == 0 || held + asked <= bound)) {
                held += asked;
                next = waiter;
                waiter = null;
            }
        }
        if (next != null) {
            next.complete(null);
        }
    }

    synchronized long held() {
        return held;
    }
}
