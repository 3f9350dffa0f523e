package io.imageworker.messaging.intake;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Something a waiting record holds until it gives it back (its bytes, its place among the queued requests, its
 * count among those at their partition's window): given back once, by whichever way its wait ends first.
 */
final class Held {

    /** What a record that holds nothing gives back. */
    static final Held NOTHING = new Held(null);

    private final AtomicReference<Runnable> giveBack;

    Held(Runnable giveBack) {
        this.giveBack = new AtomicReference<>(giveBack);
    }

    void giveBack() {
        Runnable once = giveBack.getAndSet(null);
        if (once != null) {
            once.run();
        }
    }
}
