package io.imageworker.gateway;

import io.imageworker.ImageRequest;
import io.imageworker.Lane;
import io.imageworker.config.ProducerWeights;
import io.imageworker.config.WorkerConfig;
import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * An asynchronous limit on gateway calls in flight, shared fairly among producers within each {@link Lane}. Waiting
 * holds no thread: a caller's {@code Uni} completes when a permit frees up. The limit can move at run time between a floor
 * and a ceiling (additive increase on success, multiplicative decrease on 429), so the worker backs off a
 * rate-limited gateway on its own.
 *
 * <p>A free permit goes to a waiting priority call first, except that while calls of both lanes wait, the normal
 * lane gets at least {@code minShare} of the permits handed out (a credit of {@code minShare} per permit given while
 * both wait; a whole credit buys the normal lane the next one), so it never starves behind a busy priority lane.
 *
 * <p>Within a lane, permits go round-robin among the producers with waiting calls (contract v1.2), weighted by
 * {@link ProducerWeights} (smooth weighted round-robin: each turn every producer waiting gains its weight, the one
 * with the most credit gets the permit and pays the weights of all those waiting; with {@code catalogue=1,edits=4}
 * edits gets 4 permits for each one of catalogue's while both wait, spread out, and a producer alone gets every one).
 * A producer's calls are served first come first served. A producer's queue and its credit go when its last waiting
 * call does: nothing is kept for producers that wait no more, however many there are.
 *
 * <p>A producer may be held ({@link #holdWhile}: the intake's turns hold a producer over its own spend cap): its
 * waiters get no permit while it is, and the others' go on; {@link #recheck()} hands out the permits free once it is
 * not. A run may also give its permit back for a while and take it again in its producer's turn ({@link Turn#aside}).
 */
@ApplicationScoped
public class ConcurrencyLimiter {

    private final int floor;
    private final int ceiling;
    private final double minShare;
    private final ProducerWeights weights;
    private final LaneQueue normal = new LaneQueue();
    private final LaneQueue priority = new LaneQueue();
    /** Whether a producer's waiters get no permit now; read under the lock (must not call back into the limiter). */
    private volatile Predicate<String> held = producer -> false;

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
        Set<String> named = new LinkedHashSet<>(weights.named().keySet());
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
        if (!(minShare >= 0 && minShare <= 1)) {
            throw new IllegalArgumentException("the normal lane's least share must be from 0 to 1, got " + minShare);
        }
        this.floor = floor;
        this.ceiling = ceiling;
        this.minShare = minShare;
        this.weights = weights;
        this.limit = ceiling;
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
     * frees the permit when it ends, however it ends: also when the caller cancels (a cancel, the drain) while it
     * waits, as the permit is given, or before the work starts, which would otherwise leave the permit with no one.
     */
    public <T> Uni<T> run(Lane lane, String producer, Supplier<Uni<T>> work) {
        Waiter waiter = new Waiter(producer == null ? ImageRequest.DEFAULT_PRODUCER : producer);
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

    /**
     * Holds the waiters of each producer for which {@code producerHeld} is true: they get no permit until it is false
     * and a permit is free or {@link #recheck()} is called.
     */
    public void holdWhile(Predicate<String> producerHeld) {
        this.held = producerHeld;
    }

    /** Gives the free permits to waiters not held (a producer held before may be no more). */
    public void recheck() {
        while (true) {
            Waiter next;
            synchronized (this) {
                next = inFlight < limit ? nextWaiter() : null;
                if (next == null) {
                    return;
                }
                inFlight++;
            }
            next.emitter.complete(Boolean.TRUE);
        }
    }

    /**
     * {@link #run(Lane, String, Supplier)} whose work is given its {@link Turn}, through which it can give its permit
     * back while it waits for something and take it again afterwards.
     */
    public <T> Uni<T> run(Lane lane, String producer, Function<Turn, Uni<T>> work) {
        Turn turn = new Turn(lane, producer == null ? ImageRequest.DEFAULT_PRODUCER : producer);
        return acquire(lane, turn.waiter)
                .onItem()
                .transformToUni(ignored -> turn.waiter.start()
                        ? Uni.createFrom().deferred(() -> work.apply(turn))
                        : Uni.createFrom().<T>nothing())
                .onTermination()
                .invoke(turn::end);
    }

    /** One run's hold on its permit, which it can give back for a while ({@link #aside}). */
    public final class Turn {
        private final Lane lane;
        private final String producer;
        /** The claim that holds (or waits for) the run's permit now; guarded by the limiter's lock when replaced. */
        private volatile Waiter waiter;

        private Turn(Lane lane, String producer) {
            this.lane = lane;
            this.producer = producer;
            this.waiter = new Waiter(producer);
        }

        /**
         * {@code wait} without the permit: given back at once (to the next waiter in turn), taken again once {@code
         * wait} has its item, in the producer's turn (which comes only while the producer is not held). A failure of
         * {@code wait} is passed on without the permit (the run ends).
         */
        public <X> Uni<X> aside(Uni<X> wait) {
            Waiter given = waiter;
            if (given.end()) {
                release();
            }
            return wait.chain(item -> {
                Waiter again = new Waiter(producer, true);
                synchronized (ConcurrencyLimiter.this) {
                    waiter = again;
                }
                return acquire(lane, again)
                        .chain(granted -> again.start()
                                ? Uni.createFrom().item(item)
                                // The run ended as its permit came: the permit went back with it (end()).
                                : Uni.createFrom().<X>nothing());
            });
        }

        private void end() {
            if (waiter.end()) {
                release();
            }
        }
    }

    /** Completes when a permit is given to {@code waiter}. */
    private Uni<Boolean> acquire(Lane lane, Waiter waiter) {
        LaneQueue queue = lane == Lane.PRIORITY ? priority : normal;
        return Uni.createFrom().emitter(emitter -> {
            boolean granted;
            synchronized (this) {
                granted = inFlight < limit && (waiter.returning || !held.test(waiter.producer)) && waiter.grant();
                if (granted) {
                    inFlight++;
                } else {
                    waiter.emitter = emitter;
                    queue.add(waiter);
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
        private final String producer;
        /** Taking back a permit given back for a while ({@link Turn#aside}): first of its producer, never held. */
        private final boolean returning;
        /** Set under the limiter's lock before it is queued. */
        private UniEmitter<? super Boolean> emitter;

        Waiter(String producer) {
            this(producer, false);
        }

        Waiter(String producer, boolean returning) {
            this.producer = producer;
            this.returning = returning;
        }

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
        Predicate<String> held = this.held;
        boolean priorityWaits = priority.hasUnheld(held);
        boolean normalWaits = normal.hasUnheld(held);
        if (!priorityWaits && !normalWaits) {
            return null;
        }
        if (priorityWaits && normalWaits) {
            normalCredit += minShare;
            if (normalCredit >= 1) {
                normalCredit -= 1;
                return normal.poll(held);
            }
            return priority.poll(held);
        }
        return priorityWaits ? priority.poll(held) : normal.poll(held);
    }

    /**
     * The waiting calls of one lane: a queue per producer with waiting calls, in order of arrival, and each one's
     * credit of the smooth weighted round-robin. Guarded by the limiter's lock.
     */
    private final class LaneQueue {
        private final Map<String, Producer> producers = new LinkedHashMap<>();
        private int size;

        void add(Waiter waiter) {
            Deque<Waiter> queue = producers.computeIfAbsent(waiter.producer, Producer::new).waiters;
            if (waiter.returning) {
                queue.addFirst(waiter);
            } else {
                queue.addLast(waiter);
            }
            size++;
        }

        /** Takes {@code waiter} out, if it still waits here; its producer goes with its last waiter. */
        void remove(Waiter waiter) {
            Producer producer = producers.get(waiter.producer);
            if (producer != null && producer.waiters.remove(waiter)) {
                size--;
                if (producer.waiters.isEmpty()) {
                    producers.remove(waiter.producer);
                }
            }
        }

        boolean isEmpty() {
            return size == 0;
        }

        int size() {
            return size;
        }

        int size(String producer) {
            Producer waiting = producers.get(producer);
            return waiting == null ? 0 : waiting.waiters.size();
        }

        int sizeExcept(Set<String> named) {
            int others = 0;
            for (Producer producer : producers.values()) {
                if (!named.contains(producer.name)) {
                    others += producer.waiters.size();
                }
            }
            return others;
        }

        /** Whether a producer not held has waiters. */
        boolean hasUnheld(Predicate<String> held) {
            for (Producer producer : producers.values()) {
                if (!producer.held(held)) {
                    return true;
                }
            }
            return false;
        }

        /** The first waiter of the producer not held whose turn it is, taken out; null when none waits. */
        Waiter poll(Predicate<String> held) {
            if (size == 0) {
                return null;
            }
            Producer next = null;
            long total = 0;
            for (Producer producer : producers.values()) {
                if (producer.held(held)) {
                    // Out of the turns while held: it neither gains nor pays credit.
                    continue;
                }
                int weight = weights.of(producer.name);
                producer.credit += weight;
                total += weight;
                // Ties go to the producer that has waited longest (the map keeps the order of arrival).
                if (next == null || producer.credit > next.credit) {
                    next = producer;
                }
            }
            if (next == null) {
                return null;
            }
            next.credit -= total;
            Waiter waiter = next.waiters.pollFirst();
            size--;
            if (next.waiters.isEmpty()) {
                producers.remove(next.name);
            }
            return waiter;
        }
    }

    /** A producer with waiting calls in one lane. */
    private static final class Producer {
        final String name;
        final Deque<Waiter> waiters = new ArrayDeque<>();
        /** Its credit in the smooth weighted round-robin: gains its weight each turn, pays the total when served. */
        long credit;

        Producer(String name) {
            this.name = name;
        }

        /** Whether its first waiter gets no permit now: it is held, and that waiter is not taking one back. */
        boolean held(Predicate<String> held) {
            Waiter first = waiters.peekFirst();
            return (first == null || !first.returning) && held.test(name);
        }
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

    /** Callers of one producer waiting for a permit, in both lanes. */
    public synchronized int waiting(String producer) {
        return normal.size(producer) + priority.size(producer);
    }

    /** Callers of producers other than {@code named} waiting for a permit, in both lanes. */
    synchronized int waitingOthers(Set<String> named) {
        return normal.sizeExcept(named) + priority.sizeExcept(named);
    }
}
