package io.imageworker.gateway;

import io.imageworker.config.ProducerWeights;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.Lane;
import io.imageworker.support.WorkerMetrics;
import io.imageworker.turns.FairTurns;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * An asynchronous limit on gateway calls in flight, shared fairly among producers within each {@link Lane}: the calls
 * wait their turn in {@link FairTurns} (priority lane first but for the normal lane's least share, producers by their
 * {@link ProducerWeights}, producers held over their cap skipped), holding no thread. What this class adds is the
 * limit's moves: it can change at run time between a floor and a ceiling (additive increase on success,
 * multiplicative decrease on 429), so the worker backs off a rate-limited gateway on its own.
 */
@ApplicationScoped
public class ConcurrencyLimiter {

    private final int floor;
    private final int ceiling;
    private final FairTurns turns;

    /**
     * Successes in a row at the limit now; read and written only in the turns' lock ({@link FairTurns#changePlaces}).
     */
    private int successesSinceIncrease;

    /**
     * The worker's limit on gateway calls: from 1 up to {@code IMAGE_WORKER_CONCURRENCY}, with its gauges
     * ({@code image_worker_gateway_calls_in_flight}, {@code _waiting}, {@code image_worker_concurrency_limit},
     * {@code image_worker_concurrency_max}, {@code image_worker_gateway_priority_calls_waiting}), the normal lane
     * keeping {@code IMAGE_WORKER_PRIORITY_MIN_SHARE} while both lanes wait.
     */
    @Inject
    ConcurrencyLimiter(WorkerConfig config, MeterRegistry registry) {
        this(
                1,
                Math.max(1, config.concurrency()),
                config.priorityMinShare(),
                ProducerWeights.of(config.producerWeights()));
        WorkerMetrics.gauge(
                        "image_worker_gateway_calls_in_flight",
                        this,
                        ConcurrencyLimiter::inFlight,
                        "Gateway calls holding a permit now")
                .register(registry);
        WorkerMetrics.gauge(
                        "image_worker_gateway_calls_waiting",
                        this,
                        ConcurrencyLimiter::waiting,
                        "Calls waiting for a permit")
                .register(registry);
        WorkerMetrics.gauge(
                        "image_worker_gateway_priority_calls_waiting",
                        this,
                        limiter -> limiter.waiting(Lane.PRIORITY),
                        "Calls of the priority lane waiting for a permit (also counted in"
                                + " image_worker_gateway_calls_waiting)")
                .register(registry);
        WorkerMetrics.gauge(
                        "image_worker_concurrency_limit",
                        this,
                        ConcurrencyLimiter::limit,
                        "The adaptive limit of gateway calls in flight now")
                .register(registry);
        WorkerMetrics.gauge(
                        "image_worker_concurrency_max",
                        this,
                        limiter -> limiter.ceiling,
                        "IMAGE_WORKER_CONCURRENCY, the ceiling of the adaptive limit")
                .register(registry);
        // One series per producer named in the weights, and the default producer; the others together: the labels
        // stay as few as the setting names, however many producers publish.
        Set<String> named = new LinkedHashSet<>(
                ProducerWeights.of(config.producerWeights()).named().keySet());
        named.add(ImageRequest.DEFAULT_PRODUCER);
        for (String producer : named) {
            producerWaiting(registry, producer, limiter -> limiter.waiting(producer));
        }
        producerWaiting(registry, "other", limiter -> limiter.waitingOthers(named));
    }

    private void producerWaiting(MeterRegistry registry, String producer, ToDoubleFunction<ConcurrencyLimiter> value) {
        WorkerMetrics.gauge(
                        "image_worker_gateway_producer_calls_waiting",
                        this,
                        value,
                        "Calls of a producer waiting for a permit (producers not named in"
                                + " IMAGE_WORKER_PRODUCER_WEIGHTS together as producer=\"other\")")
                .tag("producer", producer)
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
        this(floor, ceiling, minShare, ProducerWeights.EQUAL);
    }

    /**
     * A limiter starting at {@code ceiling}, never going below {@code floor}, that keeps {@code minShare} of the
     * permits for the normal lane while both lanes wait, and shares each lane's permits among producers by {@code
     * weights}.
     */
    public ConcurrencyLimiter(int floor, int ceiling, double minShare, ProducerWeights weights) {
        if (floor < 1 || ceiling < floor) {
            throw new IllegalArgumentException("need 1 <= floor <= ceiling, got " + floor + ", " + ceiling);
        }
        this.floor = floor;
        this.ceiling = ceiling;
        this.turns = new FairTurns(ceiling, minShare, weights);
    }

    /** Runs {@code work} of the normal lane once a permit is free; see {@link #run(Lane, String, Supplier)}. */
    public <T> Uni<T> run(Supplier<Uni<T>> work) {
        return run(Lane.NORMAL, work);
    }

    /** Runs {@code work} of the default producer; see {@link #run(Lane, String, Supplier)}. */
    public <T> Uni<T> run(Lane lane, Supplier<Uni<T>> work) {
        return run(lane, ImageRequest.DEFAULT_PRODUCER, work);
    }

    /**
     * Runs {@code work} of {@code producer} once a permit is free for it (its lane's turn, then its producer's), and
     * frees the permit when it ends, however it ends ({@link FairTurns#run(Lane, String, Supplier)}).
     */
    public <T> Uni<T> run(Lane lane, String producer, Supplier<Uni<T>> work) {
        return turns.run(lane, producer, work);
    }

    /**
     * {@link #run(Lane, String, Supplier)} whose work is given its {@link FairTurns.Turn}, through which it can give
     * its permit back while it waits for something and take it again afterwards.
     */
    public <T> Uni<T> run(Lane lane, String producer, Function<FairTurns.Turn, Uni<T>> work) {
        return turns.run(lane, producer, work);
    }

    /**
     * Holds the waiters of each producer for which {@code producerHeld} is true: they get no permit until it is false
     * and a permit is free or {@link #recheck()} is called.
     */
    public void holdWhile(Predicate<String> producerHeld) {
        turns.holdWhile(producerHeld);
    }

    /** Gives the free permits to waiters not held (a producer held before may be no more). */
    public void recheck() {
        turns.recheck();
    }

    /** A call succeeded: after {@code limit} successes in a row at this limit, allow one more call in flight. */
    public void onSuccess() {
        turns.changePlaces(limit -> {
            if (limit < ceiling && ++successesSinceIncrease >= limit) {
                successesSinceIncrease = 0;
                return limit + 1;
            }
            return limit;
        });
    }

    /** The gateway rate-limited a call: halve the limit, not below the floor. */
    public void onRateLimited() {
        turns.changePlaces(limit -> {
            successesSinceIncrease = 0;
            return Math.max(floor, limit / 2);
        });
    }

    /** The current limit. */
    public int limit() {
        return turns.places();
    }

    /** Calls in flight now. */
    public int inFlight() {
        return turns.inFlight();
    }

    /** Callers waiting for a permit. */
    public int waiting() {
        return turns.waiting();
    }

    /** Callers of one lane waiting for a permit. */
    public int waiting(Lane lane) {
        return turns.waiting(lane);
    }

    /** Callers of one producer waiting for a permit, in both lanes. */
    public int waiting(String producer) {
        return turns.waiting(producer);
    }

    /** Callers of producers other than {@code named} waiting for a permit, in both lanes. */
    int waitingOthers(Set<String> named) {
        return turns.waitingOthers(named);
    }
}
