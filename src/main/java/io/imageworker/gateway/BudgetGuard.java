package io.imageworker.gateway;

import io.imageworker.Billing.CallCost;
import io.imageworker.config.WorkerConfig;
import io.imageworker.support.Patience;
import io.imageworker.support.Pauses;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The spend guard: at most {@code budget.max-calls} gateway calls that may be billed per window (fixed windows, the
 * first starting with the first call). A call takes a place before it is sent, because its cost is only known after
 * it; a call refused before any work (401, 404, 429, never sent) gives its place back. Over the cap a request waits
 * for the next window (holding no gateway permit, so intake stops by backpressure) or fails with
 * {@code BUDGET_EXCEEDED}, by setting. Spend is reported in quota units when the price per call is configured, and the
 * requests held for the next window as {@code image_worker_budget_held_requests} (created at start, for alerts).
 */
@ApplicationScoped
@Startup
public class BudgetGuard {

    private final Optional<Integer> maxCalls;
    private final long windowNanos;
    private final boolean pause;
    private final LongSupplier clock;
    private final Counter billedUnits;
    private final Counter unknownUnits;
    private final long pricePerCall;
    private final AtomicInteger held = new AtomicInteger();
    private final Pauses pauses;
    private long windowStart;
    private int used;
    private boolean windowOpen;

    @Inject
    BudgetGuard(WorkerConfig config, MeterRegistry registry, Pauses pauses) {
        this(config.budget(), registry, System::nanoTime, pauses);
    }

    /** A guard with its own clock, for tests. */
    BudgetGuard(WorkerConfig.Budget config, MeterRegistry registry, LongSupplier clock, Pauses pauses) {
        this.maxCalls = config.maxCalls();
        this.windowNanos = config.window().toNanos();
        this.pause = config.onExceeded() == WorkerConfig.BudgetAction.pause;
        this.pricePerCall = config.pricePerCall();
        this.clock = clock;
        this.pauses = pauses;
        this.billedUnits = Counter.builder("image_worker_spend_quota_units")
                .description("Quota units billed by the gateway (price per call x billed calls; 500000 = 1 dollar)")
                .register(registry);
        this.unknownUnits = Counter.builder("image_worker_spend_unknown_quota_units")
                .description("Quota units of calls whose billing is unknown (timeouts, 5xx)")
                .register(registry);
        registry.gauge("image_worker_budget_used_calls", this, BudgetGuard::used);
        Gauge.builder("image_worker_budget_held_requests", held, AtomicInteger::get)
                .description("Requests the spend guard holds until its window allows another call")
                .register(registry);
    }

    /**
     * Takes a place for one call: {@code true} when the call may be sent, {@code false} when the cap refuses it and
     * the setting is {@code fail}. With {@code pause}, completes only once a place is free.
     */
    public Uni<Boolean> reserve() {
        if (maxCalls.isEmpty()) {
            return Uni.createFrom().item(Boolean.TRUE);
        }
        return Uni.createFrom().deferred(() -> {
            Duration wait = tryReserve();
            if (wait.isZero()) {
                return Uni.createFrom().item(Boolean.TRUE);
            }
            if (!pause) {
                return Uni.createFrom().item(Boolean.FALSE);
            }
            held.incrementAndGet();
            pauses.begin(Pauses.Reason.BUDGET);
            return waitForPlace(wait).onTermination().invoke(() -> {
                pauses.end(Pauses.Reason.BUDGET);
                held.decrementAndGet();
            });
        });
    }

    /** Tries again after {@code wait}, as often as it takes; counted once in {@code held} by the caller. */
    private Uni<Boolean> waitForPlace(Duration wait) {
        return Patience.after(wait, () -> {
            Duration next = tryReserve();
            return next.isZero() ? Uni.createFrom().item(Boolean.TRUE) : waitForPlace(next);
        });
    }

    /** Requests held now until the window allows another call. */
    public int held() {
        return held.get();
    }

    private synchronized Duration tryReserve() {
        long now = clock.getAsLong();
        if (!windowOpen || now - windowStart >= windowNanos) {
            windowStart = now;
            windowOpen = true;
            used = 0;
        }
        if (used < maxCalls.get()) {
            used++;
            return Duration.ZERO;
        }
        Duration wait = Duration.ofNanos(windowNanos - (now - windowStart)).plusMillis(1);
        Log.warnf(
                "Spend guard: %d calls used in this window of %s; %s",
                used,
                Duration.ofNanos(windowNanos),
                pause ? "holding requests for " + wait.toMillis() + " ms" : "failing requests with BUDGET_EXCEEDED");
        return wait;
    }

    /** A reserved call ended with this cost: a call that cannot have been billed gives its place back. */
    public void settle(CallCost cost) {
        switch (cost) {
            case BILLED -> billedUnits.increment(pricePerCall);
            case UNKNOWN -> unknownUnits.increment(pricePerCall);
            case REFUSED, NOT_SENT -> {
                if (maxCalls.isPresent()) {
                    synchronized (this) {
                        used = Math.max(0, used - 1);
                    }
                }
            }
        }
    }

    /** Places used in the current window. */
    public synchronized int used() {
        return used;
    }
}
