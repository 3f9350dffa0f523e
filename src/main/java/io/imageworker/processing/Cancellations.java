package io.imageworker.processing;

import io.imageworker.ErrorCode;
import io.imageworker.TerminalEvent;
import io.imageworker.config.WorkerConfig;
import io.imageworker.gateway.GatewayCalls;
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
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The cancels this worker knows of (contract v1.2), and the requests they may still stop. A cancel names a {@code
 * requestId}; it is remembered until its record's time plus {@code IMAGE_WORKER_CANCEL_RETENTION}, so that a request
 * arriving later is cancelled too, then forgotten. At most {@link #MAX_HELD} are held: beyond it the cancels nearest
 * to their expiry are forgotten first (logged), so a flood of cancels costs a bounded amount of memory (an entry is
 * its id, at most 128 characters, and about 150 bytes more).
 *
 * <p>A request in progress holds a {@link Ticket}: the one place that decides, atomically, whether its next gateway
 * call may leave. Until any call of the request has left, a cancel stops it ({@code CANCELLED}, no call, nothing
 * billed); once one has, the request finishes and reports normally. The messaging layer feeds the cancels in
 * ({@link #cancel}); this class knows nothing of Kafka.
 */
@ApplicationScoped
public class Cancellations {

    /** The most cancels held at once. */
    public static final int MAX_HELD = 100_000;

    private final Clock clock;
    private final Duration retention;
    private final int maxHeld;
    private final boolean enabled;
    /** Cancel expiry (epoch millis) by request id; guarded by {@code this}. */
    private final Map<String, Long> expiries = new HashMap<>();
    /** The same cancels ordered by expiry, nearest first; an entry whose expiry was moved since is stale. */
    private final PriorityQueue<Held> byExpiry = new PriorityQueue<>();
    /** The tickets of the requests in progress, by request id. */
    private final Map<String, Ticket> tickets = new ConcurrentHashMap<>();

    private final Counter cancelledRequests;
    private long dropped;

    @Inject
    Cancellations(WorkerConfig config, MeterRegistry registry) {
        this(
                Clock.systemUTC(),
                config.cancel().retention(),
                MAX_HELD,
                config.topic().cancel().filter(topic -> !topic.isBlank()).isPresent(),
                registry);
    }

    /**
     * Cancellations on {@code clock}, holding at most {@code maxHeld} cancels, each for {@code retention}; on or off
     * ({@code enabled}). Public for the tests of the layers above, which build one without the configuration.
     */
    public Cancellations(Clock clock, Duration retention, int maxHeld, boolean enabled, MeterRegistry registry) {
        if (retention.isNegative() || retention.isZero()) {
            throw new IllegalArgumentException("the cancel retention must be positive, got " + retention);
        }
        this.clock = clock;
        this.retention = retention;
        this.maxHeld = maxHeld;
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
                        "Cancels remembered for requests that may still come (at most " + maxHeld + ")")
                .register(registry);
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
     * A cancel of {@code requestId}, made at {@code madeAtMillis} (its record's time): remembered until that time plus
     * the retention, and a request of that id in progress that has made no call yet is stopped. A cancel already past
     * its retention is ignored.
     */
    public void cancel(String requestId, long madeAtMillis) {
        long expiry = madeAtMillis + retention.toMillis();
        long now = clock.millis();
        if (expiry <= now) {
            return;
        }
        synchronized (this) {
            forgetExpired(now);
            Long known = expiries.get(requestId);
            if (known == null || known < expiry) {
                expiries.put(requestId, expiry);
                byExpiry.add(new Held(requestId, expiry));
            }
            while (expiries.size() > maxHeld) {
                Held nearest = byExpiry.poll();
                if (nearest == null) {
                    break;
                }
                if (nearest.expiry() == expiries.getOrDefault(nearest.requestId(), -1L)) {
                    expiries.remove(nearest.requestId());
                    if (dropped++ % 10_000 == 0) {
                        Log.warnf(
                                "Cancellation: more than %d cancels held; forgetting those nearest to their expiry"
                                        + " (%d so far)",
                                maxHeld, dropped);
                    }
                }
            }
        }
        Ticket ticket = tickets.get(requestId);
        if (ticket != null) {
            ticket.cancel();
        }
    }

    /** Whether a cancel of {@code requestId} is remembered now. */
    public synchronized boolean isCancelled(String requestId) {
        Long expiry = expiries.get(requestId);
        return expiry != null && expiry > clock.millis();
    }

    /** How many cancels are remembered (the expired ones forgotten first). */
    public synchronized int held() {
        forgetExpired(clock.millis());
        return expiries.size();
    }

    private void forgetExpired(long now) {
        while (!byExpiry.isEmpty() && byExpiry.peek().expiry() <= now) {
            Held held = byExpiry.poll();
            expiries.remove(held.requestId(), held.expiry());
        }
    }

    /**
     * The ticket of a request whose work begins: {@code alreadyCalled} when an earlier attempt made calls for it (its
     * recorded variants), which no cancel can undo. Close it when the request ends.
     */
    Ticket ticket(String requestId, boolean alreadyCalled) {
        Ticket ticket = new Ticket(requestId, alreadyCalled);
        if (enabled) {
            tickets.put(requestId, ticket);
        }
        return ticket;
    }

    /** A request ended with {@code event}, decided now (not replayed): counted when it is {@code CANCELLED}. */
    void ended(TerminalEvent event) {
        if (event instanceof TerminalEvent.Failed failed && failed.error().code() == ErrorCode.CANCELLED) {
            cancelledRequests.increment();
        }
    }

    /** A cancel, and when it is forgotten. */
    private record Held(String requestId, long expiry) implements Comparable<Held> {
        @Override
        public int compareTo(Held other) {
            return Long.compare(expiry, other.expiry);
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
            tickets.remove(requestId, this);
        }
    }
}
