package io.imageworker.gateway;

import io.imageworker.config.WorkerConfig;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.Supplier;

/**
 * An asynchronous, FIFO limit on gateway calls in flight. Waiting holds no thread: a caller's {@code Uni} completes
 * when a permit frees up. The limit can move at run time between a floor and a ceiling (additive increase on
 * success, multiplicative decrease on 429), so the worker backs off a rate-limited gateway on its own.
 */
@ApplicationScoped
public class ConcurrencyLimiter {

    private final int floor;
    private final int ceiling;
    private final Deque<UniEmitter<? super Boolean>> waiters = new ArrayDeque<>();
    private int limit;
    private int inFlight;
    private int successesSinceIncrease;

    /**
     * The worker's limit on gateway calls: from 1 up to {@code IMAGE_WORKER_CONCURRENCY}, with its gauges
     * ({@code image_worker_gateway_calls_in_flight}, {@code _waiting}, {@code image_worker_concurrency_limit},
     * {@code image_worker_concurrency_max}).
     */
    @Inject
    ConcurrencyLimiter(WorkerConfig config, MeterRegistry registry) {
        this(1, Math.max(1, config.concurrency()));
        registry.gauge("image_worker_gateway_calls_in_flight", this, ConcurrencyLimiter::inFlight);
        registry.gauge("image_worker_gateway_calls_waiting", this, ConcurrencyLimiter::waiting);
        registry.gauge("image_worker_concurrency_limit", this, ConcurrencyLimiter::limit);
        // A strong reference: Micrometer holds gauge objects weakly.
        Gauge.builder("image_worker_concurrency_max", this, limiter -> limiter.ceiling)
                .description("IMAGE_WORKER_CONCURRENCY, the ceiling of the adaptive limit")
                .strongReference(true)
                .register(registry);
    }

    /** A limiter starting at {@code ceiling}, never going below {@code floor}. */
    public ConcurrencyLimiter(int floor, int ceiling) {
        if (floor < 1 || ceiling < floor) {
            throw new IllegalArgumentException("need 1 <= floor <= ceiling, got " + floor + ", " + ceiling);
        }
        this.floor = floor;
        this.ceiling = ceiling;
        this.limit = ceiling;
    }

    /** Runs {@code work} once a permit is free, and frees the permit when it ends, however it ends. */
    public <T> Uni<T> run(Supplier<Uni<T>> work) {
        return acquire()
                .onItem()
                .transformToUni(ignored ->
                        Uni.createFrom().deferred(work::get).onTermination().invoke(this::release));
    }

    private Uni<Boolean> acquire() {
        return Uni.createFrom().emitter(emitter -> {
            boolean granted;
            synchronized (this) {
                granted = inFlight < limit;
                if (granted) {
                    inFlight++;
                } else {
                    waiters.addLast(emitter);
                }
            }
            if (granted) {
                emitter.complete(Boolean.TRUE);
            } else {
                emitter.onTermination(() -> {
                    synchronized (this) {
                        waiters.remove(emitter);
                    }
                });
            }
        });
    }

    private void release() {
        UniEmitter<? super Boolean> next;
        synchronized (this) {
            inFlight--;
            next = inFlight < limit ? waiters.pollFirst() : null;
            if (next != null) {
                inFlight++;
            }
        }
        if (next != null) {
            next.complete(Boolean.TRUE);
        }
    }

    /** A call succeeded: after {@code limit} successes in a row at this limit, allow one more call in flight. */
    public void onSuccess() {
        UniEmitter<? super Boolean> next = null;
        synchronized (this) {
            if (limit < ceiling && ++successesSinceIncrease >= limit) {
                limit++;
                successesSinceIncrease = 0;
                if (inFlight < limit) {
                    next = waiters.pollFirst();
                    if (next != null) {
                        inFlight++;
                    }
                }
            }
        }
        if (next != null) {
            next.complete(Boolean.TRUE);
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
        return waiters.size();
    }
}
