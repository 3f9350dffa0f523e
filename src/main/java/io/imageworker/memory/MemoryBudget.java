package io.imageworker.memory;

import io.imageworker.config.WorkerConfig;
import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkus.logging.Log;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The worker's byte budget ({@code IMAGE_WORKER_MEMORY_BUDGET}): every large thing a request holds (a gateway answer
 * being read, its decoded image, the image on its way to the store, the reference images of an edit) is held through
 * a {@link Lease} counted against one number, so that memory is bounded in bytes by the worker itself, whatever the
 * concurrency and whatever size the gateway answers with.
 *
 * <p>It is backpressure, never failure: a lease that asks for bytes that do not fit waits (asynchronously, in order of
 * arrival, no thread held) until other leases give bytes back; nothing fails because memory is short. Two rules keep
 * waiting from ever becoming a deadlock:
 *
 * <ul>
 *   <li><b>Alone.</b> When nothing at all is held, the first waiter gets what it asked for, even more than the whole
 *       budget: an item larger than the budget proceeds alone.
 *   <li><b>Progress.</b> Bytes held by a {@link Kind#CALL} lease come back on their own (the call ends, the image is
 *       stored). Bytes held by a {@link Kind#INPUTS} lease (an edit's references) come back only when the request ends,
 *       which takes its calls. When everything held is of the second kind, nothing would ever come back: the first
 *       call in the queue is let through.
 * </ul>
 *
 * <p>Bytes already in memory, or on their way on a socket whose reading must not stall (a gateway answer that turned out
 * larger than its call's reservation), are {@linkplain Lease#hold(long) held} without waiting: waiting there would run
 * the call's deadline down and turn a shortage of memory into a failed, billed call. The call's reservation learns
 * from such answers ({@code gateway.AnswerSizes}), so this overshoot happens at most once per size.
 */
@ApplicationScoped
@Startup
public class MemoryBudget {

    /** Who gives a lease's bytes back, and when. */
    public enum Kind {
        /** A gateway call and its image: given back when the image is stored or the call has failed. */
        CALL,
        /** The inputs of a request (an edit's references): given back when the request ends. */
        INPUTS
    }

    /** The default budget, as a share of the JVM's maximum heap. */
    static final double DEFAULT_HEAP_SHARE = 0.5;

    private static final Pattern SIZE =
            Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(%|b|k|ki|kb|m|mi|mb|g|gi|gb|t|ti|tb)?", Pattern.CASE_INSENSITIVE);

    private final long budget;
    private final Timer waits;
    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    private final AtomicLong peak = new AtomicLong();
    // Guarded by this.
    private long held;
    private long heldByCalls;
    private long waiting;

    @Inject
    MemoryBudget(WorkerConfig config, MeterRegistry registry) {
        this(budgetOf(config.memoryBudget(), Runtime.getRuntime().maxMemory()), registry);
        Log.infof(
                "Memory budget: %d MiB for answers, images and references (%s)",
                budget >> 20,
                config.memoryBudget()
                        .map(value -> "IMAGE_WORKER_MEMORY_BUDGET=" + value)
                        .orElse("half of the maximum heap of "
                                + (Runtime.getRuntime().maxMemory() >> 20) + " MiB"));
    }

    /** A budget of {@code budget} bytes, reporting to {@code registry}. */
    public MemoryBudget(long budget, MeterRegistry registry) {
        if (budget <= 0) {
            throw new IllegalArgumentException("a memory budget must be positive");
        }
        this.budget = budget;
        bytesGauge(
                registry,
                "image_worker_memory_budget",
                MemoryBudget::budget,
                "Bytes of answers, images and references the worker may hold at once");
        bytesGauge(
                registry,
                "image_worker_memory_held",
                MemoryBudget::held,
                "Bytes of answers, images and references held now");
        bytesGauge(
                registry,
                "image_worker_memory_held_peak",
                MemoryBudget::peak,
                "The most bytes of answers, images and references held at once since start");
        bytesGauge(
                registry,
                "image_worker_memory_waiting",
                MemoryBudget::waiting,
                "Bytes asked for and waiting for the budget: calls not sent, references not read");
        this.waits = Timer.builder("image_worker_memory_wait")
                .description("Time work waited for the memory budget")
                .register(registry);
    }

    /** A gauge of bytes this budget reads from itself ({@link WorkerMetrics#gauge}). */
    private void bytesGauge(
            MeterRegistry registry, String name, ToDoubleFunction<MemoryBudget> value, String description) {
        WorkerMetrics.gauge(name, this, value, description).baseUnit("bytes").register(registry);
    }

    /** A budget of {@code budget} bytes with metrics of its own, for tests and tools. */
    public static MemoryBudget of(long budget) {
        return new MemoryBudget(budget, new SimpleMeterRegistry());
    }

    /**
     * The budget a setting gives: bytes ({@code 268435456}), a size ({@code 256M}, {@code 256Mi}, {@code 1G}: units are
     * powers of 1024) or a share of the maximum heap ({@code 40%}); absent, {@value #DEFAULT_HEAP_SHARE} of it.
     *
     * @throws IllegalArgumentException naming the setting, when the value is none of these or not positive
     */
    public static long budgetOf(Optional<String> setting, long maxHeap) {
        if (setting.isEmpty() || setting.get().isBlank()) {
            return (long) (maxHeap * DEFAULT_HEAP_SHARE);
        }
        Matcher matcher = SIZE.matcher(setting.get().trim());
        if (!matcher.matches()) {
            throw invalid(setting.get());
        }
        double number = Double.parseDouble(matcher.group(1));
        String unit = matcher.group(2) == null ? "b" : matcher.group(2).toLowerCase(Locale.ROOT);
        long bytes =
                switch (unit.charAt(0)) {
                    case '%' -> number > 0 && number <= 100 ? (long) (maxHeap * number / 100) : 0;
                    case 'k' -> (long) (number * (1L << 10));
                    case 'm' -> (long) (number * (1L << 20));
                    case 'g' -> (long) (number * (1L << 30));
                    case 't' -> (long) (number * (1L << 40));
                    default -> (long) number;
                };
        if (bytes <= 0) {
            throw invalid(setting.get());
        }
        return bytes;
    }

    private static IllegalArgumentException invalid(String value) {
        return new IllegalArgumentException("IMAGE_WORKER_MEMORY_BUDGET=" + value
                + " is not a positive size: give bytes (268435456), a size (256Mi, 1G) or a share of the heap (40%)");
    }

    /** A new lease of {@code kind}, holding nothing; {@link Lease#close() close} it when its work ends. */
    public Lease lease(Kind kind) {
        return new Lease(kind);
    }

    /** The budget in bytes. */
    public long budget() {
        return budget;
    }

    /** Bytes held now. */
    public synchronized long held() {
        return held;
    }

    /** The most bytes held at once since start. */
    public long peak() {
        return peak.get();
    }

    /** Bytes asked for by waiting leases. */
    public synchronized long waiting() {
        return waiting;
    }

    /** Leases waiting now. */
    public synchronized int waiters() {
        return queue.size();
    }

    /** The leases' bytes change by {@code delta}; the caller holds the lock. */
    private void change(Lease lease, long delta) {
        lease.bytes += delta;
        held += delta;
        if (lease.kind == Kind.CALL) {
            heldByCalls += delta;
        }
        peak.accumulateAndGet(held, Math::max);
    }

    /** Grants what the rules allow, in order; emits outside the lock. */
    private void grantWaiting() {
        ArrayDeque<Waiter> granted = new ArrayDeque<>();
        synchronized (this) {
            while (!queue.isEmpty()) {
                Waiter head = queue.peek();
                if (held + head.extra <= budget || held == 0) {
                    grant(queue.poll(), granted);
                    continue;
                }
                if (heldByCalls == 0) {
                    // Only inputs are held: they come back when their requests end, which takes calls.
                    Waiter call = firstCall();
                    if (call != null) {
                        queue.remove(call);
                        grant(call, granted);
                        continue;
                    }
                }
                break;
            }
        }
        granted.forEach(waiter -> waiter.emitter.complete(null));
    }

    private Waiter firstCall() {
        for (Iterator<Waiter> it = queue.iterator(); it.hasNext(); ) {
            Waiter waiter = it.next();
            if (waiter.lease.kind == Kind.CALL) {
                return waiter;
            }
        }
        return null;
    }

    private void grant(Waiter waiter, ArrayDeque<Waiter> granted) {
        waiting -= waiter.extra;
        waiter.lease.waiter = null;
        if (!waiter.lease.closed) {
            change(waiter.lease, waiter.extra);
        }
        waits.record(Duration.ofNanos(System.nanoTime() - waiter.since));
        granted.add(waiter);
    }

    private record Waiter(Lease lease, long extra, long since, UniEmitter<? super Void> emitter) {}

    /**
     * Bytes held for one piece of work. Thread-safe; every change goes through the budget's lock. A lease waits for at
     * most one reservation at a time.
     */
    public final class Lease implements AutoCloseable {
        private final Kind kind;
        // Guarded by MemoryBudget.this.
        private long bytes;
        private boolean closed;
        private Waiter waiter;

        private Lease(Kind kind) {
            this.kind = kind;
        }

        /**
         * Waits until this lease holds at least {@code total} bytes: at once when they fit, else when other leases have
         * given enough back (or by the rules above). Cancelling the returned {@code Uni} leaves the queue.
         */
        public Uni<Void> reserve(long total) {
            return Uni.createFrom().emitter(emitter -> {
                boolean now;
                synchronized (MemoryBudget.this) {
                    long extra = total - bytes;
                    if (closed || extra <= 0) {
                        now = true;
                    } else if (queue.isEmpty() && (held + extra <= budget || held == 0)) {
                        change(this, extra);
                        now = true;
                    } else {
                        if (waiter != null) {
                            throw new IllegalStateException("a lease waits for one reservation at a time");
                        }
                        waiter = new Waiter(this, extra, System.nanoTime(), emitter);
                        queue.add(waiter);
                        waiting += extra;
                        now = false;
                    }
                }
                if (now) {
                    emitter.complete(null);
                    return;
                }
                emitter.onTermination(this::leaveQueue);
                // Progress: the queue may hold only inputs ahead of a call that would otherwise wait for ever.
                grantWaiting();
            });
        }

        private void leaveQueue() {
            boolean left;
            synchronized (MemoryBudget.this) {
                Waiter mine = waiter;
                left = mine != null && queue.remove(mine);
                if (left) {
                    waiting -= mine.extra;
                    waiter = null;
                }
            }
            if (left) {
                // Those behind it may fit now.
                grantWaiting();
            }
        }

        /**
         * Holds at least {@code total} bytes from now on, without waiting: for bytes already in memory or arriving on a
         * socket that must not stall. The budget may be exceeded by them.
         */
        public void hold(long total) {
            synchronized (MemoryBudget.this) {
                if (!closed && total > bytes) {
                    change(this, total - bytes);
                }
            }
        }

        /** Holds exactly {@code total} bytes from now on: gives back what is above it, or holds more without waiting. */
        public void resize(long total) {
            synchronized (MemoryBudget.this) {
                if (closed || total == bytes) {
                    return;
                }
                change(this, Math.max(0, total) - bytes);
            }
            grantWaiting();
        }

        /** Bytes this lease holds. */
        public long bytes() {
            synchronized (MemoryBudget.this) {
                return bytes;
            }
        }

        /** Gives every byte back, leaves the queue; the lease holds nothing from now on. Idempotent. */
        @Override
        public void close() {
            synchronized (MemoryBudget.this) {
                if (closed) {
                    return;
                }
                closed = true;
                change(this, -bytes);
            }
            leaveQueue();
            grantWaiting();
        }
    }
}
