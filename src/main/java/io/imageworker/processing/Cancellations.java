package io.imageworker.processing;

import io.imageworker.config.TopicSettings;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.gateway.GatewayCalls;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Pauses;
import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The cancels this worker knows of (contract v1.2), and the requests they may still stop. A cancel names a {@code
 * requestId}; it is remembered until its time plus {@code IMAGE_WORKER_CANCEL_RETENTION}, so that a request arriving
 * later is cancelled too, then forgotten. Its time is its record's, but never later than this worker's clock when it is
 * read: anyone who may write the cancel topic chooses the record's time, and a time ahead would keep the cancel longer
 * and put it behind every real one in the order below.
 *
 * <p>Memory is bounded in bytes whatever is sent: at most {@link #MAX_HELD_BYTES} of cancels are held, each counted as
 * its id's characters plus {@link #ENTRY_BYTES} (the maps' nodes, the entry, the string), each producer holding any as
 * its name's characters plus {@link #PRODUCER_BYTES}, and one id holds one entry however often it is sent (a cancel
 * sent again with a later time replaces the first). Beyond the bound, cancels are forgotten by producer (the {@code
 * producer} a cancel names, contract v1.2; none or an invalid one is {@code default}): the producer holding the most
 * bytes of cancels loses its oldest (the nearest to its expiry) first; among producers holding as many, the one whose
 * last cancel came latest. So a storm of one producer forgets its own cancels, and another producer's, earlier or
 * later, are kept while it holds fewer bytes than the storm; a storm spread over many producer names, each holding
 * as few as the others, forgets its own newest names first, never the cancels of a producer that came before it. What
 * is forgotten is counted in {@code image_worker_cancels_dropped_total} (alert {@code ImageWorkerCancelsDropped}) and
 * logged at most once per {@link #DROP_LOG_EVERY}.
 *
 * <p>A request in progress holds a {@link Ticket}: the one place that decides, atomically, whether its next gateway
 * call may leave. Until any call of the request has left, a cancel stops it ({@code CANCELLED}, no call, nothing
 * billed); once one has, the request finishes and reports normally. The messaging layer feeds the cancels in
 * ({@link #cancel}); this class knows nothing of Kafka.
 */
@ApplicationScoped
public class Cancellations {

    /** The most bytes of cancels held at once: some 150,000 ids of 8 to 36 characters, 100,000 of 128. */
    public static final long MAX_HELD_BYTES = 32L * 1024 * 1024;
    /**
     * What one cancel held costs beside its id's characters (one byte each: ids are ASCII): a hash-map node and its slot,
     * two tree nodes (the order of all cancels, and its producer's), the entry, the string and its array's header, on a
     * 64-bit JVM with compressed references.
     */
    public static final int ENTRY_BYTES = 208;
    /**
     * What one producer holding cancels costs beside its name's characters: its entry, its hash-map node, its own
     * ordered set of cancels and its node in the order of producers.
     */
    public static final int PRODUCER_BYTES = 256;
    /** At most one log line about forgotten cancels this often. */
    static final Duration DROP_LOG_EVERY = Duration.ofSeconds(30);

    private final Clock clock;
    private final Duration retention;
    private final long maxHeldBytes;
    private final boolean enabled;
    /** The cancels held, by request id; guarded by {@code this}. */
    private final Map<String, Held> byId = new HashMap<>();
    /** The same cancels, oldest (nearest to its expiry) first; guarded by {@code this}. */
    private final TreeSet<Held> byTime = new TreeSet<>();
    /** The producers holding cancels, by name; guarded by {@code this}. */
    private final Map<String, Producer> producers = new HashMap<>();
    /** The same producers, the first to lose a cancel first ({@link Producer#compareTo}); guarded by {@code this}. */
    private final TreeSet<Producer> byLoad = new TreeSet<>();
    /** The requests whose work is under way: a cancel stops one through its ticket ({@link Ticket}). */
    private final RequestsInProgress progress;

    private final Counter cancelledRequests;
    private final Counter dropped;
    /** The bytes {@link #byId} and {@link #byTime} hold, as counted by {@link #bytesOf}; guarded by {@code this}. */
    private long heldBytes;
    /** Orders cancels of the same time by their arrival; guarded by {@code this}. */
    private long arrivals;
    /** When (epoch millis) a line about forgotten cancels was last logged; guarded by {@code this}. */
    private long lastDropLog = -DROP_LOG_EVERY.toMillis();
    /** Cancels forgotten since that line; guarded by {@code this}. */
    private long droppedSinceLog;

    @Inject
    Cancellations(TopicSettings topics, CancelSettings cancel, MeterRegistry registry, RequestsInProgress progress) {
        this(
                Clock.systemUTC(),
                cancel.retention(),
                MAX_HELD_BYTES,
                topics.cancel().filter(topic -> !topic.isBlank()).isPresent(),
                registry,
                progress);
    }

    /**
     * Cancellations on {@code clock}, holding at most {@code maxHeldBytes} of cancels ({@link #bytesOf}), each for
     * {@code retention}; on or off ({@code enabled}). Public for the tests of the layers above, which build one without
     * the configuration.
     */
    public Cancellations(Clock clock, Duration retention, long maxHeldBytes, boolean enabled, MeterRegistry registry) {
        this(clock, retention, maxHeldBytes, enabled, registry, new RequestsInProgress(new Pauses(System::nanoTime)));
    }

    /** The same, a cancel stopping the requests whose work is under way in {@code progress}. */
    public Cancellations(
            Clock clock,
            Duration retention,
            long maxHeldBytes,
            boolean enabled,
            MeterRegistry registry,
            RequestsInProgress progress) {
        if (retention.isNegative() || retention.isZero()) {
            throw new IllegalArgumentException("the cancel retention must be positive, got " + retention);
        }
        this.clock = clock;
        this.progress = progress;
        this.retention = retention;
        this.maxHeldBytes = maxHeldBytes;
        this.enabled = enabled;
        // Exported with cancellation off too (0): every worker exports the same series, which the dashboard draws.
        this.cancelledRequests = WorkerMetrics.counter(
                registry,
                "image_worker_requests_cancelled",
                "Requests that ended CANCELLED: a cancel named them before any of their gateway calls left");
        WorkerMetrics.gauge(
                        "image_worker_cancels_held",
                        this,
                        Cancellations::held,
                        "Cancels remembered for requests that may still come")
                .register(registry);
        WorkerMetrics.gauge(
                        "image_worker_cancels_held_bytes",
                        this,
                        Cancellations::heldBytes,
                        "Bytes of the cancels remembered (at most " + maxHeldBytes + ", their ids and " + ENTRY_BYTES
                                + " bytes each)")
                .baseUnit("bytes")
                .register(registry);
        this.dropped = WorkerMetrics.counter(
                registry,
                "image_worker_cancels_dropped",
                "Cancels forgotten before their retention ended because the cancels held reached their bound in bytes"
                        + " (the oldest of the producer holding the most first): a request they named may still be called");
    }

    /** The bytes one cancel of {@code requestId} is counted as. */
    public static long bytesOf(String requestId) {
        return ENTRY_BYTES + (long) requestId.length();
    }

    /** The bytes a producer named {@code producer} holding cancels is counted as, beside its cancels. */
    public static long bytesOfProducer(String producer) {
        return PRODUCER_BYTES + (long) producer.length();
    }

    /** Whether cancellation is on ({@code IMAGE_WORKER_TOPIC_CANCEL} names a topic). */
    public boolean enabled() {
        return enabled;
    }

    /** How long a cancel is remembered from its record's time. */
    public Duration retention() {
        return retention;
    }

    /**
     * A cancel of {@code requestId}, made at {@code madeAtMillis} (its record's time; taken as now when later than
     * now): remembered until that time plus the retention, and a request of that id in progress that has made no call
     * yet is stopped. A cancel already past its retention is ignored; one of an id held already replaces it when it is
     * later.
     */
    public void cancel(String requestId, long madeAtMillis) {
        cancel(requestId, ImageRequest.DEFAULT_PRODUCER, madeAtMillis);
    }

    /**
     * {@link #cancel(String, long)} of a cancel sent by {@code producer} (a name of the contract's rule, or {@code
     * default}): beyond the bound, the producer holding the most loses its cancels first.
     */
    public void cancel(String requestId, String producer, long madeAtMillis) {
        long now = clock.millis();
        long madeAt = Math.min(madeAtMillis, now);
        if (madeAt + retention.toMillis() <= now) {
            return;
        }
        synchronized (this) {
            forgetExpired(now);
            Held known = byId.get(requestId);
            if (known == null || known.madeAt() < madeAt) {
                if (known != null) {
                    forget(known);
                }
                hold(new Held(requestId, producer, madeAt, arrivals++));
            }
            while (heldBytes > maxHeldBytes && !byLoad.isEmpty()) {
                forget(byLoad.first().cancels.first());
                dropped.increment();
                droppedSinceLog++;
                if (now - lastDropLog >= DROP_LOG_EVERY.toMillis()) {
                    Log.warnf(
                            "Cancellation: more than %d bytes of cancels held; forgot %d, the oldest of the producers holding"
                                    + " the most (%d in all, see image_worker_cancels_dropped_total)",
                            maxHeldBytes, droppedSinceLog, (long) dropped.count());
                    lastDropLog = now;
                    droppedSinceLog = 0;
                }
            }
        }
        progress.workOf(requestId).ifPresent(RequestsInProgress.Work::cancelled);
    }

    /** Whether a cancel of {@code requestId} is remembered now. */
    public synchronized boolean isCancelled(String requestId) {
        Held held = byId.get(requestId);
        return held != null && held.madeAt() + retention.toMillis() > clock.millis();
    }

    /** How many cancels are remembered (the expired ones forgotten first). */
    public synchronized int held() {
        forgetExpired(clock.millis());
        return byId.size();
    }

    /** The bytes of the cancels remembered, as counted by {@link #bytesOf} (the expired ones forgotten first). */
    public synchronized long heldBytes() {
        forgetExpired(clock.millis());
        return heldBytes;
    }

    private void forgetExpired(long now) {
        long expiredBefore = now - retention.toMillis();
        while (!byTime.isEmpty() && byTime.first().madeAt() <= expiredBefore) {
            forget(byTime.first());
        }
    }

    private void hold(Held held) {
        Producer producer = producers.get(held.producer());
        if (producer == null) {
            producer = new Producer(held.producer());
            producers.put(held.producer(), producer);
            heldBytes += bytesOfProducer(held.producer());
        } else {
            byLoad.remove(producer);
        }
        producer.cancels.add(held);
        producer.bytes += bytesOf(held.requestId());
        producer.lastArrival = held.arrival();
        byLoad.add(producer);
        byId.put(held.requestId(), held);
        byTime.add(held);
        heldBytes += bytesOf(held.requestId());
    }

    private void forget(Held held) {
        byTime.remove(held);
        byId.remove(held.requestId());
        heldBytes -= bytesOf(held.requestId());
        Producer producer = producers.get(held.producer());
        byLoad.remove(producer);
        producer.cancels.remove(held);
        producer.bytes -= bytesOf(held.requestId());
        if (producer.cancels.isEmpty()) {
            producers.remove(held.producer());
            heldBytes -= bytesOfProducer(held.producer());
        } else {
            byLoad.add(producer);
        }
    }

    /** How many producers hold cancels now (the expired ones forgotten first). */
    public synchronized int producersHolding() {
        forgetExpired(clock.millis());
        return producers.size();
    }

    /**
     * The ticket of a request whose work begins: {@code alreadyCalled} when an earlier attempt made calls for it (its
     * recorded variants), which no cancel can undo. A cancel that comes while it is open stops its work under way
     * ({@link RequestsInProgress.Work#stoppable}). Close it when the request ends.
     */
    Ticket ticket(String requestId, boolean alreadyCalled) {
        Ticket ticket = new Ticket(requestId, alreadyCalled);
        if (enabled) {
            ticket.work = progress.workOf(requestId).orElse(null);
            if (ticket.work != null) {
                ticket.work.stoppable(ticket.stop);
            }
        }
        return ticket;
    }

    /** A request ended with {@code event}, decided now (not replayed): counted when it is {@code CANCELLED}. */
    void ended(TerminalEvent event) {
        if (event instanceof TerminalEvent.Failed failed && failed.error().code() == ErrorCode.CANCELLED) {
            cancelledRequests.increment();
        }
    }

    /**
     * The cancels of one producer, oldest first, and what orders the producers for forgetting: the most bytes first,
     * then the one whose last cancel came latest (a storm spread over many names forgets its own newest names, not the
     * producers that came before it), then by name. Mutable, so taken out of {@link #byLoad} before each change.
     */
    private static final class Producer implements Comparable<Producer> {
        private final String name;
        private final TreeSet<Held> cancels = new TreeSet<>();
        private long bytes;
        private long lastArrival;

        private Producer(String name) {
            this.name = name;
        }

        @Override
        public int compareTo(Producer other) {
            int byBytes = Long.compare(other.bytes, bytes);
            if (byBytes != 0) {
                return byBytes;
            }
            int byArrival = Long.compare(other.lastArrival, lastArrival);
            return byArrival != 0 ? byArrival : name.compareTo(other.name);
        }
    }

    /** A cancel, who sent it, its time, and its place among the cancels of the same time. */
    private record Held(String requestId, String producer, long madeAt, long arrival) implements Comparable<Held> {
        @Override
        public int compareTo(Held other) {
            int byTime = Long.compare(madeAt, other.madeAt);
            return byTime != 0 ? byTime : Long.compare(arrival, other.arrival);
        }
    }

    /**
     * Whether the gateway calls of one request may leave: {@code OPEN} until the first call claims the request
     * ({@code CALLED}: every later call leaves too) or a cancel stops it first ({@code CANCELLED}: none does). The
     * switch happens once, atomically, so a cancel racing a request's first call either stops it before it leaves or
     * loses to it.
     */
    final class Ticket implements GatewayCalls.CallGate, AutoCloseable {
        private static final int OPEN = 0;
        private static final int CALLED = 1;
        private static final int CANCELLED = 2;

        private final String requestId;
        private final AtomicInteger state;
        private final CompletableFuture<Void> stopped = new CompletableFuture<>();
        /** What a cancel of its request's work runs ({@link RequestsInProgress.Work#stoppable}). */
        private final Runnable stop = this::cancel;
        /** Its request's work under way, which a cancel stops through it; null when cancellation is off. */
        private volatile RequestsInProgress.Work work;

        private Ticket(String requestId, boolean alreadyCalled) {
            this.requestId = requestId;
            this.state = new AtomicInteger(alreadyCalled ? CALLED : OPEN);
        }

        /** Stops the request if no call of it has left yet. */
        void cancel() {
            if (state.compareAndSet(OPEN, CANCELLED)) {
                Log.infof("[%s] cancelled before any gateway call", requestId);
                stopped.complete(null);
            }
        }

        /** Whether the request is cancelled: a cancel was remembered for it, or came, before any call left. */
        @Override
        public boolean cancelled() {
            if (state.get() == OPEN && enabled && isCancelled(requestId)) {
                cancel();
            }
            return state.get() == CANCELLED;
        }

        @Override
        public boolean mayCall() {
            while (true) {
                int now = state.get();
                if (now != OPEN) {
                    return now == CALLED;
                }
                if (enabled && isCancelled(requestId)) {
                    cancel();
                } else if (state.compareAndSet(OPEN, CALLED)) {
                    return true;
                }
            }
        }

        @Override
        public <T> Uni<T> unlessCancelled(Uni<T> wait, Supplier<T> whenCancelled) {
            if (!enabled) {
                return wait;
            }
            // A dependent stage per subscriber: cancelling it (when the wait wins) leaves the shared signal untouched.
            Uni<T> cancelledMeanwhile = Uni.createFrom()
                    .completionStage(() -> stopped.thenApply(ignored -> (Void) null))
                    .map(ignored -> whenCancelled.get());
            return Uni.combine().any().of(wait, cancelledMeanwhile);
        }

        @Override
        public void close() {
            if (work != null) {
                work.notStoppable(stop);
            }
        }
    }
}
