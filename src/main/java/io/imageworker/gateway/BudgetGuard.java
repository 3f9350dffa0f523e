package io.imageworker.gateway;

import io.imageworker.Billing.CallCost;
import io.imageworker.config.WorkerConfig;
import io.imageworker.support.Patience;
import io.imageworker.support.Pauses;
import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The spend guard: at most {@code budget.max-calls} gateway calls that may be billed per window, for the whole fleet.
 * A call takes a place before it is sent, because its cost is only known after it; a call refused before any work
 * (401, 404, 429, never sent) gives its place back. Places are claimed in a log every replica shares and reads in the
 * same order ({@link BudgetLog}, on Kafka: the bean of {@code messaging}): replicas together never take more places than the cap, and a restarted
 * replica finds the window's count where it left it. Windows are aligned on the epoch, so all replicas agree on them.
 *
 * <p>Over the cap a request waits for the next window (holding no gateway permit, so intake stops by backpressure; a
 * pause by design, see {@link Pauses}) or fails with {@code BUDGET_EXCEEDED}, by setting. Spend is reported in quota
 * units when the price per call is configured, and the requests held for the next window as
 * {@code image_worker_budget_held_requests} (created at start, for alerts). The calls used in the window and the cap are
 * the fleet's ({@link #FLEET_WIDE_GAUGES}): every replica reports the same values.
 */
@ApplicationScoped
@Startup
public class BudgetGuard {

    /** Calls claimed in the current window by the whole fleet, as far as this replica has read the log. */
    public static final String USED_CALLS = "image_worker_budget_used_calls";

    /** The cap, {@code budget.max-calls}, of the whole fleet; NaN without a cap. */
    public static final String MAX_CALLS = "image_worker_budget_max_calls";

    /**
     * The gauges every replica reports for the whole fleet, not for itself: summed over the pods they read N times too
     * high, so dashboards and alerts take their {@code max} (checked in ObservabilityFilesTest).
     */
    public static final Set<String> FLEET_WIDE_GAUGES = Set.of(USED_CALLS, MAX_CALLS);

    /** How long to wait before claiming again when the log could not be written or read. */
    private static final Duration LOG_RETRY = Duration.ofSeconds(1);

    private final Optional<Integer> maxCalls;
    private final long windowMillis;
    private final boolean pause;
    private final LongSupplier clock;
    private final BudgetLog log;
    private final Pauses pauses;
    private final Counter billedUnits;
    private final Counter unknownUnits;
    private final long pricePerCall;
    private final AtomicInteger held = new AtomicInteger();
    /** Places this replica holds for calls not settled yet, oldest first. */
    private final Deque<Place> places = new ArrayDeque<>();

    @Inject
    BudgetGuard(WorkerConfig config, MeterRegistry registry, Pauses pauses, Instance<BudgetLog> shared) {
        this(config.budget(), registry, System::currentTimeMillis, pauses, shared(config, shared));
    }

    private static BudgetLog shared(WorkerConfig config, Instance<BudgetLog> shared) {
        if (config.budget().maxCalls().isEmpty()) {
            return null;
        }
        BudgetLog log = shared.get();
        log.start();
        return log;
    }

    /** A guard on its own log and wall clock (epoch milliseconds), for tests. */
    BudgetGuard(WorkerConfig.Budget config, MeterRegistry registry, LongSupplier clock, Pauses pauses, BudgetLog log) {
        this.maxCalls = config.maxCalls();
        this.windowMillis = Math.max(1, config.window().toMillis());
        this.pause = config.onExceeded() == WorkerConfig.BudgetAction.pause;
        this.pricePerCall = config.pricePerCall();
        this.clock = clock;
        this.pauses = pauses;
        this.log = log;
        this.billedUnits = WorkerMetrics.counter(
                registry,
                "image_worker_spend_quota_units",
                "Quota units billed by the gateway (price per call x billed calls; 500000 = 1 dollar)");
        this.unknownUnits = WorkerMetrics.counter(
                registry,
                "image_worker_spend_unknown_quota_units",
                "Quota units of calls whose billing is unknown (timeouts, 5xx)");
        // Strong references (WorkerMetrics.gauge): an alert on a gauge whose object is collected would never fire.
        WorkerMetrics.gauge(
                        USED_CALLS,
                        this,
                        BudgetGuard::used,
                        "Gateway calls claimed in the current window by the whole fleet (every replica reports the"
                                + " same count: take the max over the pods, not the sum); 0 without a cap")
                .register(registry);
        // Exported without a cap too, like the other budget gauges, but as NaN: no line is drawn and no comparison
        // holds, where 0 would read as a cap of zero calls.
        WorkerMetrics.gauge(
                        MAX_CALLS,
                        this,
                        guard -> guard.maxCalls.map(Integer::doubleValue).orElse(Double.NaN),
                        "The cap of gateway calls per window for the whole fleet (IMAGE_WORKER_BUDGET_MAX_CALLS;"
                                + " every replica reports it: take the max over the pods, not the sum); NaN without a"
                                + " cap")
                .register(registry);
        WorkerMetrics.gauge(
                        "image_worker_budget_held_requests",
                        held,
                        AtomicInteger::get,
                        "Requests the spend guard holds until its window allows another call")
                .register(registry);
        // Exported without a cap too (0), so that the alert on it names a metric every worker has.
        WorkerMetrics.gauge(
                        "image_worker_budget_reader_stalled",
                        this,
                        guard -> guard.readerStall().isPresent() ? 1 : 0,
                        "1 while the spend guard cannot decide claims: its budget-log reader is restarting or has"
                                + " not read for too long")
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
        return Uni.createFrom().deferred(this::claim).chain(placed -> {
            if (placed) {
                return Uni.createFrom().item(Boolean.TRUE);
            }
            if (!pause) {
                return Uni.createFrom().item(Boolean.FALSE);
            }
            held.incrementAndGet();
            pauses.begin(Pauses.Reason.BUDGET);
            return waitForPlace().onTermination().invoke(() -> {
                pauses.end(Pauses.Reason.BUDGET);
                held.decrementAndGet();
            });
        });
    }

    /** Claims again at the next window, as often as it takes; counted once in {@code held} by the caller. */
    private Uni<Boolean> waitForPlace() {
        return Patience.after(untilNextWindow(), () -> claim().chain(
                        placed -> placed ? Uni.createFrom().item(Boolean.TRUE) : waitForPlace()));
    }

    /** One claim of a place in the current window: {@code false} when the window is full. */
    private Uni<Boolean> claim() {
        long window = window();
        int used = log.used(window);
        if (used >= maxCalls.get()) {
            // Known to be full as far as this replica has read: no claim written.
            return Uni.createFrom().item(refused(used));
        }
        String claim = UUID.randomUUID().toString();
        return log.claim(claim, window, maxCalls.get())
                .map(accepted -> {
                    if (accepted) {
                        synchronized (places) {
                            places.add(new Place(claim, window));
                        }
                        return Boolean.TRUE;
                    }
                    return refused(log.used(window));
                })
                .onFailure()
                .recoverWithUni(error -> {
                    Log.warnf(
                            "Spend guard: the budget log did not answer (%s); claiming again in %d ms",
                            error.toString(), LOG_RETRY.toMillis());
                    return Patience.after(LOG_RETRY, this::claim);
                });
    }

    private Boolean refused(int used) {
        Log.warnf(
                "Spend guard: %d of %d calls used in this window of %s (all replicas); %s",
                used,
                maxCalls.get(),
                Duration.ofMillis(windowMillis),
                pause
                        ? "holding requests for " + untilNextWindow().toMillis() + " ms"
                        : "failing requests with BUDGET_EXCEEDED");
        return Boolean.FALSE;
    }

    /** Requests held now until the window allows another call. */
    public int held() {
        return held.get();
    }

    private long window() {
        return clock.getAsLong() / windowMillis;
    }

    private Duration untilNextWindow() {
        long now = clock.getAsLong();
        return Duration.ofMillis((now / windowMillis + 1) * windowMillis - now + 1);
    }

    /** A reserved call ended with this cost: a call that cannot have been billed gives its place back. */
    public void settle(CallCost cost) {
        switch (cost) {
            case BILLED -> billedUnits.increment(pricePerCall);
            case UNKNOWN -> unknownUnits.increment(pricePerCall);
            default -> {}
        }
        if (maxCalls.isEmpty()) {
            return;
        }
        Place place;
        synchronized (places) {
            place = places.poll();
        }
        boolean free = cost == CallCost.REFUSED || cost == CallCost.NOT_SENT;
        if (place != null && free && place.window() == window()) {
            log.release(place.claim(), place.window());
        }
    }

    /** Places used in the current window, by all the replicas that share the budget, as far as this one knows. */
    public int used() {
        return maxCalls.isEmpty() ? 0 : log.used(window());
    }

    /**
     * Why no call can be claimed now although a cap is set (the reader of the shared budget is restarting, or has
     * stalled), or empty: calls then wait, each claim timing out and tried again, until the reader reads again.
     */
    public Optional<String> readerStall() {
        return maxCalls.isEmpty() ? Optional.empty() : log.stall();
    }

    /** A place this replica holds: its claim in the log, and the window it is in. */
    private record Place(String claim, long window) {}
}
