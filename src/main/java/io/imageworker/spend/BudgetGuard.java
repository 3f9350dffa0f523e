package io.imageworker.spend;

import io.imageworker.config.ProducerBudgets;
import io.imageworker.contract.Billing.CallCost;
import io.imageworker.contract.ImageRequest;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;

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
 *
 * <p>Per-producer caps (contract v1.2, {@code IMAGE_WORKER_BUDGET_PER_PRODUCER}, {@link ProducerBudgets}): a call of a
 * producer with a cap of its own takes a place in that cap too (a scope of its own in the same log, with windows of its
 * own length), before the fleet's. A producer over its cap waits (or fails, with {@code fail}) while the others go on:
 * its requests wait outside the places in progress ({@link #holds} keeps the intake from taking more of them, and one
 * already in progress gives its place back while it waits, {@link Aside}). Each reservation knows its places, so a call
 * that cannot have been billed gives back exactly its own ({@link #settle}). Per producer named:
 * {@code image_worker_budget_producer_used_calls} and {@code _max_calls} (fleet-wide, as {@link #FLEET_WIDE_GAUGES}) and
 * {@code image_worker_budget_producer_held_requests} (this replica's).
 *
 * <p>Why it is longer than 400 lines: its gauges ({@link BudgetGauges}) and its count of requests held ({@link
 * HeldRequests}) are classes of their own; what stays is one job, a call's places taken, waited for and given back,
 * and its {@link Reservation}, nested so that only the guard can read the places a reservation holds and settle them.
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
    public static final Set<String> FLEET_WIDE_GAUGES = Set.of(
            USED_CALLS, MAX_CALLS, "image_worker_budget_producer_used_calls", "image_worker_budget_producer_max_calls");

    /** The label of the producers not named in the per-producer setting, in its gauges. */
    static final String OTHERS = "other";

    /** How long to wait before claiming again when the log could not be written or read. */
    private static final Duration LOG_RETRY = Duration.ofSeconds(1);

    private final Optional<Integer> maxCalls;
    private final long windowMillis;
    private final boolean pause;
    private final LongSupplier clock;
    private final BudgetLog log;
    private final Counter billedUnits;
    private final Counter unknownUnits;
    private final Counter claimedAgain;
    private final long pricePerCall;
    /** The requests this guard holds now, counted, and the spend guard's pause while any is. */
    private final HeldRequests held;

    private final ProducerBudgets budgets;
    /** Records of a producer the intake holds back while the producer is over its cap. */
    private volatile ToIntFunction<String> heldInIntake = producer -> 0;

    @Inject
    BudgetGuard(BudgetSettings config, MeterRegistry registry, Pauses pauses, Instance<BudgetLog> shared) {
        this(config, registry, System::currentTimeMillis, pauses, shared(config, shared));
    }

    private static BudgetLog shared(BudgetSettings config, Instance<BudgetLog> shared) {
        if (config.maxCalls().isEmpty()
                && ProducerBudgets.orNone(config.perProducer()).isEmpty()) {
            return null;
        }
        BudgetLog log = shared.get();
        log.start();
        return log;
    }

    /**
     * A guard on its own log and wall clock (epoch milliseconds), for tests: public since the spend guard has its own
     * package, for the tests of the gateway loop that asks it.
     */
    public BudgetGuard(
            BudgetSettings config, MeterRegistry registry, LongSupplier clock, Pauses pauses, BudgetLog log) {
        this.maxCalls = config.maxCalls();
        this.windowMillis = Math.max(1, config.window().toMillis());
        this.pause = config.onExceeded() == BudgetSettings.Action.pause;
        this.pricePerCall = config.pricePerCall();
        this.clock = clock;
        this.held = new HeldRequests(pauses);
        this.log = log;
        this.budgets = ProducerBudgets.orNone(config.perProducer());
        this.billedUnits = WorkerMetrics.counter(
                registry,
                "image_worker_spend_quota_units",
                "Quota units billed by the gateway (price per call x billed calls; 500000 = 1 dollar)");
        this.unknownUnits = WorkerMetrics.counter(
                registry,
                "image_worker_spend_unknown_quota_units",
                "Quota units of calls whose billing is unknown (timeouts, 5xx)");
        this.claimedAgain = WorkerMetrics.counter(
                registry,
                "image_worker_budget_claimed_again",
                "Calls whose budget places were claimed again because a window ended while they waited for their slot");
        BudgetGauges.register(this, budgets, registry);
    }

    /** {@link #reserve(String, Aside)} of the default producer, holding its place in progress while it waits. */
    public Uni<Reservation> reserve() {
        return reserve(ImageRequest.DEFAULT_PRODUCER, Aside.NONE);
    }

    /**
     * Takes a place for one call of {@code producer}'s request (null: the default producer): in the producer's own
     * cap first, if it has one (contract v1.2), then in the fleet's; a reservation {@link Reservation#granted()} when
     * the call may be sent, refused when a cap refuses it and the setting is {@code fail}. With {@code pause},
     * completes only once both places are taken: a producer over its cap waits for its next window within {@code
     * aside} (the request gives its place in progress back meanwhile, so the other producers' requests go on), a
     * request held by the fleet's cap holds its place (every producer waits alike). A producer's place is given back
     * when the fleet's cap refuses the call, and claimed again after the fleet's wait. Pass the reservation to {@link
     * #settle(Reservation, CallCost)} once the call's cost is known.
     */
    public Uni<Reservation> reserve(String producer, Aside aside) {
        String name = producer == null ? ImageRequest.DEFAULT_PRODUCER : producer;
        Optional<ProducerBudgets.Cap> cap = budgets.of(name);
        if (maxCalls.isEmpty() && cap.isEmpty()) {
            return Uni.createFrom().item(Reservation.FREE);
        }
        HeldRequests.Holding holding = held.holding(name);
        return Uni.createFrom()
                .deferred(() -> places(name, cap, aside, holding))
                .onTermination()
                .invoke(holding::end);
    }

    /** The producer's place (if it has a cap), then the fleet's (if it has one), waiting as the setting says. */
    private Uni<Reservation> places(
            String producer, Optional<ProducerBudgets.Cap> cap, Aside aside, HeldRequests.Holding holding) {
        return producerPlace(producer, cap, aside, holding).chain(own -> {
            if (own == REFUSED) {
                return Uni.createFrom().item(Reservation.REFUSED_BY_PRODUCER);
            }
            if (maxCalls.isEmpty()) {
                return Uni.createFrom().item(new Reservation(own, null));
            }
            return claim(BudgetLedger.FLEET, maxCalls.get()).chain(fleet -> {
                if (fleet != null) {
                    return Uni.createFrom().item(new Reservation(own, fleet));
                }
                if (own != null) {
                    // Not held while the fleet's window is full: claimed again, in the window the call leaves in.
                    log.release(own.scope(), own.secret(), own.window());
                }
                if (!pause) {
                    return Uni.createFrom().item(Reservation.REFUSED_BY_FLEET);
                }
                holding.fleet(true);
                return Patience.after(untilNextWindow(BudgetLedger.FLEET), () -> {
                    holding.fleet(false);
                    return places(producer, cap, aside, holding);
                });
            });
        });
    }

    /**
     * A place in the producer's own cap: null when it has none, {@link #REFUSED} when its window is full and the
     * setting is {@code fail}; with {@code pause}, waits for its next windows within {@code aside}.
     */
    private Uni<Place> producerPlace(
            String producer, Optional<ProducerBudgets.Cap> cap, Aside aside, HeldRequests.Holding holding) {
        if (cap.isEmpty()) {
            return Uni.createFrom().nullItem();
        }
        int calls = cap.get().calls();
        return claim(producer, calls).chain(place -> {
            if (place != null) {
                return Uni.createFrom().item(place);
            }
            if (!pause) {
                return Uni.createFrom().item(REFUSED);
            }
            holding.producer(true);
            return aside.around(waitForPlace(producer, calls)).invoke(() -> holding.producer(false));
        });
    }

    /** Claims again at the scope's next window, as often as it takes. */
    private Uni<Place> waitForPlace(String scope, int limit) {
        return Patience.after(untilNextWindow(scope), () -> claim(scope, limit)
                .chain(place -> place != null ? Uni.createFrom().item(place) : waitForPlace(scope, limit)));
    }

    /** One claim of a place in the current window of {@code scope}: null when the window is full. */
    private Uni<Place> claim(String scope, int limit) {
        long window = window(scope);
        int used = log.used(scope, window);
        if (used >= limit) {
            // Known to be full as far as this replica has read: no claim written.
            return Uni.createFrom().item(refused(scope, used, limit));
        }
        // The claim's id shows nothing of its secret, which alone can release it (BudgetLedger).
        String secret = BudgetLedger.newSecret();
        return log.claim(scope, BudgetLedger.claimOf(secret), window, limit)
                .map(accepted ->
                        accepted ? new Place(scope, secret, window) : refused(scope, log.used(scope, window), limit))
                .onFailure()
                .recoverWithUni(error -> {
                    Log.warnf(
                            "Spend guard: the budget log did not answer (%s); claiming again in %d ms",
                            error.toString(), LOG_RETRY.toMillis());
                    return Patience.after(LOG_RETRY, () -> claim(scope, limit));
                });
    }

    private Place refused(String scope, int used, int limit) {
        Log.warnf(
                "Spend guard: %d of %d calls used in this window of %s (%s); %s",
                used,
                limit,
                Duration.ofMillis(windowMillis(scope)),
                scope == null ? "all replicas" : "producer " + scope + ", all replicas",
                pause
                        ? "holding requests for " + untilNextWindow(scope).toMillis() + " ms"
                        : "failing requests with BUDGET_EXCEEDED");
        return null;
    }

    /**
     * Whether {@code producer} (null: the default producer) is over its own cap as far as this replica has read the
     * shared log, and its requests wait (setting {@code pause}): the intake then takes none of them into progress
     * until its window allows another call ({@code messaging.intake.SteppingAside}). False with {@code fail} (its requests fail
     * at once instead) and for a producer without a cap.
     */
    public boolean holds(String producer) {
        if (!pause) {
            return false;
        }
        String name = producer == null ? ImageRequest.DEFAULT_PRODUCER : producer;
        Optional<ProducerBudgets.Cap> cap = budgets.of(name);
        return cap.isPresent() && log.used(name, window(name)) >= cap.get().calls();
    }

    /** The producers with a cap of their own (contract v1.2). */
    public ProducerBudgets producerBudgets() {
        return budgets;
    }

    /**
     * Counts also, in {@code image_worker_budget_producer_held_requests}, the records of a producer that the intake
     * holds back while it is over its cap ({@code messaging.intake.SteppingAside}).
     */
    public void countHeldInIntake(ToIntFunction<String> waitingOf) {
        this.heldInIntake = waitingOf;
    }

    /** Requests of {@code producer} held now for its own cap: by this guard, and in the intake. */
    public int held(String producer) {
        return held.byProducer(producer) + (holds(producer) ? heldInIntake.applyAsInt(producer) : 0);
    }

    /** Places used in the current window of {@code producer}'s own cap, by the whole fleet; 0 without a cap. */
    public int used(String producer) {
        return budgets.of(producer).isEmpty() ? 0 : log.used(producer, window(producer));
    }

    /** Requests held now until the window allows another call. */
    public int held() {
        return held.fleet();
    }

    private long window(String scope) {
        return clock.getAsLong() / windowMillis(scope);
    }

    private long windowMillis(String scope) {
        return scope == null
                ? windowMillis
                : budgets.of(scope).map(cap -> cap.window().toMillis()).orElse(windowMillis);
    }

    private Duration untilNextWindow(String scope) {
        long now = clock.getAsLong();
        long length = windowMillis(scope);
        return Duration.ofMillis((now / length + 1) * length - now + 1);
    }

    /**
     * A reserved call ended with this cost: a call that cannot have been billed gives its places back, in every scope
     * it took one in (once, however often it is settled).
     */
    public void settle(Reservation reservation, CallCost cost) {
        switch (cost) {
            case BILLED -> billedUnits.increment(pricePerCall);
            case UNKNOWN -> unknownUnits.increment(pricePerCall);
            default -> {}
        }
        if (!reservation.settled.compareAndSet(false, true)) {
            return;
        }
        boolean free = cost == CallCost.REFUSED || cost == CallCost.NOT_SENT;
        if (!free) {
            return;
        }
        for (Place place : reservation.places()) {
            if (place.window() == window(place.scope())) {
                log.release(place.scope(), place.secret(), place.window());
            }
        }
    }

    /**
     * Called as a reserved call is about to leave: false when every place of {@code reservation} lies in its scope's
     * current window, so that the call counts in the window it leaves in; true when a window has ended since the
     * places were taken (the call waited for its slot past the window's end): the reservation is then settled as not
     * sent (its places still current given back), counted in {@code image_worker_budget_claimed_again}, and the
     * caller must not send the call but reserve again.
     */
    public boolean outOfDate(Reservation reservation) {
        if (current(reservation)) {
            return false;
        }
        claimedAgain.increment();
        settle(reservation, CallCost.NOT_SENT);
        return true;
    }

    /** Whether every place of {@code reservation} lies in its scope's current window. */
    boolean current(Reservation reservation) {
        for (Place place : reservation.places()) {
            if (place.window() != window(place.scope())) {
                return false;
            }
        }
        return true;
    }

    /** The fleet's cap, {@code budget.max-calls}; empty without one. */
    Optional<Integer> maxCalls() {
        return maxCalls;
    }

    /** Places used in the current window, by all the replicas that share the budget, as far as this one knows. */
    public int used() {
        return maxCalls.isEmpty() ? 0 : log.used(BudgetLedger.FLEET, window(BudgetLedger.FLEET));
    }

    /**
     * Why no call can be claimed now although a cap is set (the reader of the shared budget is restarting, or has
     * stalled), or empty: calls then wait, each claim timing out and tried again, until the reader reads again.
     */
    public Optional<String> readerStall() {
        return maxCalls.isEmpty() && budgets.isEmpty() ? Optional.empty() : log.stall();
    }

    /**
     * A place taken: its scope ({@link BudgetLedger#FLEET} or a producer), the secret of its claim in the log (the one
     * proof that gives the place back: never printed), its window.
     */
    private record Place(String scope, String secret, long window) {
        @Override
        public String toString() {
            return "Place[" + (scope == null ? "the fleet" : scope) + ", window " + window + "]";
        }
    }

    /** The mark of a place refused with {@code fail}. */
    private static final Place REFUSED = new Place(null, "refused", -1);

    /**
     * The places one call took (in its producer's cap and in the fleet's, each if set), to be given back by {@link
     * #settle} if the call cannot have been billed; or a refusal ({@code fail} over a cap).
     */
    public static final class Reservation {
        /** A call allowed without any place: no cap applies to it. */
        public static final Reservation FREE = new Reservation(null, null);

        /** A call refused by the fleet's cap, with {@code fail}. */
        public static final Reservation REFUSED_BY_FLEET = new Reservation(
                "the spend guard allows no more gateway calls in this window (IMAGE_WORKER_BUDGET_MAX_CALLS)");

        /** A call refused by its producer's own cap, with {@code fail}. */
        public static final Reservation REFUSED_BY_PRODUCER =
                new Reservation("the spend guard allows no more gateway calls of this request's producer in this window"
                        + " (IMAGE_WORKER_BUDGET_PER_PRODUCER)");

        private final boolean granted;
        private final String refusal;
        private final List<Place> places;
        private final AtomicBoolean settled = new AtomicBoolean();

        private Reservation(String refusal) {
            this.granted = false;
            this.refusal = refusal;
            this.places = List.of();
        }

        private Reservation(Place producer, Place fleet) {
            this.granted = true;
            this.refusal = null;
            List<Place> taken = new ArrayList<>(2);
            if (producer != null) {
                taken.add(producer);
            }
            if (fleet != null) {
                taken.add(fleet);
            }
            this.places = List.copyOf(taken);
        }

        /** Whether the call may be sent. */
        public boolean granted() {
            return granted;
        }

        /** Why the call may not be sent: which cap refused it; null when granted. */
        public String refusal() {
            return refusal;
        }

        private List<Place> places() {
            return places;
        }

        @Override
        public String toString() {
            return granted ? "places " + places : "refused";
        }
    }

    /**
     * A request's place in progress, which it may give back while it waits for its producer's cap and take again
     * (in its producer's turn) before its call; {@link #NONE} keeps it.
     */
    public interface Aside {
        /** Keeps the place while waiting. */
        Aside NONE = new Aside() {
            @Override
            public <T> Uni<T> around(Uni<T> wait) {
                return wait;
            }
        };

        /** {@code wait}, with the place given back during it and taken again after it. */
        <T> Uni<T> around(Uni<T> wait);
    }
}
