package io.imageworker.testing.faults;

import io.imageworker.testing.gateway.Fault;
import io.imageworker.testing.gateway.SimulatorControl;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The faults injected continuously during a run, one at a time into the simulator's queue: the next image call takes
 * it. Weighted: 5xx (500, 502, 503) most often, then hangs, truncated bodies, expired URLs, and 429 with and without
 * {@code Retry-After}. While calls are held back (token revoked, store down) the queue is not allowed to grow beyond
 * {@value #MAX_PENDING}, so that a resumed worker does not meet a wall of faults; while {@link #hold()} is in force
 * nothing is queued.
 */
final class FaultMix {

    /** Faults allowed to wait in the queue at once. */
    static final int MAX_PENDING = 3;

    private static final List<Fault> WEIGHTED = List.of(
            Fault.serverError(500),
            Fault.serverError(500),
            Fault.serverError(502),
            Fault.serverError(503),
            Fault.hang(),
            Fault.hang(),
            Fault.truncatedBody(),
            Fault.truncatedBody(),
            Fault.expiredUrl(),
            Fault.expiredUrl(),
            Fault.rateLimited(),
            Fault.rateLimited(1));

    private final SimulatorControl control;
    private final Random random;
    private final AtomicInteger holds = new AtomicInteger();
    private final AtomicInteger injected = new AtomicInteger();

    FaultMix(SimulatorControl control, long seed) {
        this.control = control;
        this.random = new Random(seed);
    }

    /** Queues one fault unless held or the queue is full; called on a fixed rate by the run. */
    synchronized void tick() {
        if (holds.get() > 0 || control.pendingFaults().size() >= MAX_PENDING) {
            return;
        }
        control.injectFault(WEIGHTED.get(random.nextInt(WEIGHTED.size())));
        injected.incrementAndGet();
    }

    /** Stops queuing faults, and drops those waiting, until as many {@link #release()} calls. */
    synchronized void hold() {
        holds.incrementAndGet();
        control.clearFaults();
    }

    /** Ends one {@link #hold()}. */
    void release() {
        holds.decrementAndGet();
    }

    /** Faults queued by this mix so far (taken or not). */
    int injected() {
        return injected.get();
    }
}
