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
import java.util.concurrent.atomic.AtomicBoolean;
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
     * when the caller cancels between the permit's grant and its delivery (a cancel, the drain), which would otherwise
     * leave the permit with no one.
     */
    public <T> Uni<T> run(Lane lane, Supplier<Uni<T>> work) {
        // Whoever ends the run first gives the permit back: the work's end, or a cancel that reached the wait before
        // the permit was delivered.
        AtomicBoolean held = new AtomicBoolean();
        AtomicBoolean delivered = new AtomicBoolean();
        return acquire(lane, held, delivered)
                .onItem()
                .transformToUni(ignored -> Uni.createFrom().deferred(work::get))
                .onTermination()
                .invoke(() -> giveBack(held));
    }

    private void giveBack(AtomicBoolean held) {
        if (held.compareAndSet(true, false)) {
            release();
        }
    }

    /**
     * Completes when a permit is given: {@code held} is set, under the lock, as it is; {@code delivered} once the
     * permit reached the caller (a cancel before that gives it back).
     */
    private Uni<Boolean> acquire(Lane lane, AtomicBoolean held, AtomicBoolean delivered) {
        Deque<Waiter> queue = lane == Lane.PRIORITY ? priority : normal;
        Uni<Boolean> permit = Uni.createFrom().emitter(emitter -> {
            Waiter waiter = new Waiter(emitter, held);
            boolean granted;
            synchronized (this) {
                granted = inFlight < limit;
                if (granted) {
                    inFlight++;
                    held.set(true);
                } else {
                    queue.addLast(waiter);
                }
            }
            if (granted) {
                emitter.complete(Boolean.TRUE);
            } else {
                // On a cancel, or after the permit was delivered (then the work's end gives it back).
                emitter.onTermination(() -> {
                    synchronized (this) {
                        queue.remove(waiter);
                    }
                    if (!delivered.get()) {
                        // Cancelled while waiting, or as the permit was given: not delivered, so back it goes.
                        giveBack(held);
                    }
                });
            }
        });
        return permit.invoke(() -> delivered.set(true));
    }

    /** A caller waiting for a permit, and the flag that says it holds one once given. */
    private record Waiter(UniEmitter<? super Boolean> emitter, AtomicBoolean held) {
        /** Gives the permit; holds the limiter's lock. */
        Waiter granted() {
            held.set(true);
            return this;
        }
    }

    /**
     * The waiter the next free permit goes to, taken off its queue and marked as holding it; null when none waits.
     * Holds the lock.
     */
    private Waiter nextWaiter() {
        Waiter next = nextInLine();
        return next == null ? null : next.granted();
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
            next.emitter().complete(Boolean.TRUE);
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
            next.emitter().complete(Boolean.TRUE);
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
