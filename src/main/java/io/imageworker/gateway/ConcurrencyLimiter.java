package io.imageworker.gateway;

import io.imageworker.Lane;
import io.imageworker.config.WorkerConfig;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * An asynchronous limit on gateway calls in flight, first come first served within each {@link Lane}. Waiting holds
 * no thread: a caller's {@code Uni} completes when a permit frees up. The limit can move at run time between a floor
 * and a ceiling (additive increase on success, multiplicative decrease on 429), so the worker backs off a
 * rate-limited gateway on its own.
 *
 * <p>A free permit goes to a waiting priority call first, except that while calls of both lanes wait, the normal
 * lane gets at least {@code minShare} of the permits handed out (a credit of {@code minShare} per permit given while
 * both wait; a whole credit buys the normal lane the next one), so it never starves behind a busy priority lane.
 */
@ApplicationScoped
public class ConcurrencyLimiter {

    private final int floor;
    private final int ceiling;
    private final double minShare;
    private final Deque<Waiter> normal = new ArrayDeque<>();
    private final Deque<Waiter> priority = new ArrayDeque<>();
    private double normalCredit;
    private int limit;
    private int inFlight;
    private int successesSinceIncrease;

    /**
     * The worker's limit on gateway calls: from 1 up to {@code IMAGE_WORKER_CONCURRENCY}, with its gauges
     * ({@code image_worker_gateway_calls_in_flight}, {@code _waiting}, {@code image_worker_concurrency_limit},
     * {@code image_worker_concurrency_max}, {@code image_worker_gateway_priority_calls_waiting}), the normal lane
     * keeping {@code IMAGE_WORKER_PRIORITY_MIN_SHARE} while both lanes wait.
     */
    @Inject
    ConcurrencyLimiter(WorkerConfig config, MeterRegistry registry) {
        this(1, Math.max(1, config.concurrency()), config.priorityMinShare());
        // Strong references throughout: Micrometer holds a gauge's object weakly, and a gauge whose object is
        // collected disappears from the export.
        Gauge.builder("image_worker_gateway_calls_in_flight", this, ConcurrencyLimiter::inFlight)
                .strongReference(true)
                .register(registry);
        Gauge.builder("image_worker_gateway_calls_waiting", this, ConcurrencyLimiter::waiting)
                .strongReference(true)
                .register(registry);
        Gauge.builder("image_worker_gateway_priority_calls_waiting", this, limiter -> limiter.waiting(Lane.PRIORITY))
                .description("Calls of the priority lane waiting for a permit (also counted in"
                        + " image_worker_gateway_calls_waiting)")
                .strongReference(true)
                .register(registry);
        Gauge.builder("image_worker_concurrency_limit", this, ConcurrencyLimiter::limit)
                .strongReference(true)
                .register(registry);
        Gauge.builder("image_worker_concurrency_max", this, limiter -> limiter.ceiling)
                .description("IMAGE_WORKER_CONCURRENCY, the ceiling of the adaptive limit")
                .strongReference(true)
                .register(registry);
    }

    /** A limiter of one lane starting at {@code ceiling}, never going below {@code floor}. */
    public ConcurrencyLimiter(int floor, int ceiling) {
        this(floor, ceiling, 0);
    }

    /**
     * A limiter starting at {@code ceiling}, never going below {@code floor}, that keeps {@code minShare} of the
     * permits for the normal lane while both lanes wait.
     */
    public ConcurrencyLimiter(int floor, int ceiling, double minShare) {
        if (floor < 1 || ceiling < floor) {
            throw new IllegalArgumentException("need 1 <= floor <= ceiling, got " + floor + ", " + ceiling);
        }
        if (!(minShare >= 0 && minShare <= 1)) {
            throw new IllegalArgumentException("the normal lane's least share must be from 0 to 1, got " + minShare);
        }
        this.floor = floor;
        this.ceiling = ceiling;
        this.minShare = minShare;
        this.limit = ceiling;
    }

    /** Runs {@code work} of the normal lane once a permit is free; see {@link #run(Lane, Supplier)}. */
    public <T> Uni<T> run(Supplier<Uni<T>> work) {
        return run(Lane.NORMAL, work);
    }

    /**
     * Runs {@code work} once a permit is free for its lane, and frees the permit when it ends, however it ends: also
     * when the caller cancels (a cancel, the drain) while it waits, as the permit is given, or before the work starts,
     * which would otherwise leave the permit with no one.
     */
    public <T> Uni<T> run(Lane lane, Supplier<Uni<T>> work) {
        Waiter waiter = new Waiter();
        return acquire(lane, waiter)
                .onItem()
                .transformToUni(ignored -> waiter.start()
                        ? Uni.createFrom().deferred(work::get)
                        // Cancelled as its permit was given: nobody waits for this, and the permit went back.
                        : Uni.createFrom().<T>nothing())
                .onTermination()
                .invoke(() -> {
                    if (waiter.end()) {
                        release();
                    }
                });
    }

    /** Completes when a permit is given to {@code waiter}. */
    private Uni<Boolean> acquire(Lane lane, Waiter waiter) {
        Deque<Waiter> queue = lane == Lane.PRIORITY ? priority : normal;
        return Uni.createFrom().emitter(emitter -> {
            boolean granted;
            synchronized (this) {
                granted = inFlight < limit && waiter.grant();
                if (granted) {
                    inFlight++;
                } else {
                    waiter.emitter = emitter;
                    queue.addLast(waiter);
                }
            }
            if (granted) {
                emitter.complete(Boolean.TRUE);
            } else {
                emitter.onTermination(() -> {
                    synchronized (this) {
                        queue.remove(waiter);
                    }
                });
            }
        });
    }

    /**
     * One run's claim on a permit, through its states: waiting, granted (it holds a permit), started (its work runs
     * with it), ended (the permit given back, once), or gone (ended while waiting: a permit is never given to it).
     */
    private static final class Waiter {
        private static final int WAITING = 0;
        private static final int GRANTED = 1;
        private static final int STARTED = 2;
        private static final int ENDED = 3;
        private static final int GONE = 4;

        private final AtomicInteger state = new AtomicInteger(WAITING);
        /** Set under the limiter's lock before it is queued. */
        private UniEmitter<? super Boolean> emitter;

        /** Gives it a permit, under the limiter's lock; false when it is gone. */
        boolean grant() {
            return state.compareAndSet(WAITING, GRANTED);
        }

        /** Its work starts with the permit; false when the run ended (cancelled) before. */
        boolean start() {
            return state.compareAndSet(GRANTED, STARTED);
        }

        /** The run ended, however: whether it held a permit, which the caller gives back. */
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

    /**
     * The waiter the next free permit goes to, taken off its queue and granted it (waiters gone meanwhile skipped);
     * null when none waits. Holds the lock.
     */
    private Waiter nextWaiter() {
        Waiter next;
        while ((next = nextInLine()) != null) {
            if (next.grant()) {
                return next;
            }
        }
        return null;
    }

    private Waiter nextInLine() {
        if (!priority.isEmpty() && !normal.isEmpty()) {
            normalCredit += minShare;
            if (normalCredit >= 1) {
                normalCredit -= 1;
                return normal.pollFirst();
            }
            return priority.pollFirst();
        }
        return priority.isEmpty() ? normal.pollFirst() : priority.pollFirst();
    }

    private void release() {
        Waiter next;
        synchronized (this) {
            inFlight--;
            next = inFlight < limit ? nextWaiter() : null;
            if (next != null) {
                inFlight++;
            }
        }
        if (next != null) {
            next.emitter.complete(Boolean.TRUE);
        }
    }

    /** A call succeeded: after {@code limit} successes in a row at this limit, allow one more call in flight. */
    public void onSuccess() {
        Waiter next = null;
        synchronized (this) {
            if (limit < ceiling && ++successesSinceIncrease >= limit) {
                limit++;
                successesSinceIncrease = 0;
                if (inFlight < limit) {
                    next = nextWaiter();
                    if (next != null) {
                        inFlight++;
                    }
                }
            }
        }
        if (next != null) {
            next.emitter.complete(Boolean.TRUE);
        }
    }

    /** The gateway rate-limited a call: halve the limit, not below the floor. */
    public synchronized void onRateLimited() {
        limit = Math.max(floor, limit / 2);
        successesSinceIncrease = 0;
    }

    /** The current limit. */
    public synchronized int limit() {
        return limit;
    }

    /** Calls in flight now. */
    public synchronized int inFlight() {
        return inFlight;
    }

    /** Callers waiting for a permit. */
    public synchronized int waiting() {
        return normal.size() + priority.size();
    }

    /** Callers of one lane waiting for a permit. */
    public synchronized int waiting(Lane lane) {
        return lane == Lane.PRIORITY ? priority.size() : normal.size();
    }
}
