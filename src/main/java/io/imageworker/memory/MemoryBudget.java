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
 * <p>A gateway call reserves only its read window before it leaves (what its answer may buffer before reading stops,
 * {@value #READ_WINDOW} bytes at most), not its answer: thousands of calls can wait for the gateway at once. Part of the
 * budget is kept for read windows ({@code windowShare}: a window per call of the concurrency, at most
 * {@value #WINDOW_SHARE} of the budget), so that calls keep leaving while answers and images fill the rest; windows
 * beyond it take what is free. When an answer starts to arrive, its call {@linkplain Lease#admit(long) asks for the
 * answer's bytes} while the response is paused: such a waiter goes first (the gateway has billed the call; a new call
 * can wait for room beyond its share), and a third rule keeps it from waiting for ever:
 *
 * <ul>
 *   <li><b>Answers.</b> When no lease holds bytes that come back without more memory (an answer admitted and being read,
 *       decoded or stored), the first answer waiting is let through, over the budget if need be: the read windows of
 *       calls whose answers wait, and inputs, come back only after answers are read.
 * </ul>
 *
 * <p>Bytes already in memory, or arriving beyond what an answer declared, are {@linkplain Lease#hold(long) held} without
 * waiting; the budget may be exceeded by them.
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

    /**
     * The most bytes a call reserves before it is sent, its read window: what its answer may bring in before reading
     * pauses (Netty's read buffer and the connection's inbound queue, whose high-water mark is 64 KiB).
     */
    public static final long READ_WINDOW = 64 * 1024;

    /** The most of the budget kept for read windows. */
    static final double WINDOW_SHARE = 0.25;

    private static final Pattern SIZE =
            Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(%|b|k|ki|kb|m|mi|mb|g|gi|gb|t|ti|tb)?", Pattern.CASE_INSENSITIVE);

    private final long budget;
    private final Timer waits;
    /** The part of the budget kept for the read windows of calls in flight, whatever else waits. */
    private final long windowShare;
    /** Waiters for inputs ({@link Kind#INPUTS}). */
    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    /** Waiters for the read window of a call not yet sent ({@link Kind#CALL}, {@link Lease#reserve}). */
    private final ArrayDeque<Waiter> windows = new ArrayDeque<>();
    /** Waiters for answers already on the wire ({@link Lease#admit}): served first. */
    private final ArrayDeque<Waiter> answers = new ArrayDeque<>();

    private final AtomicLong peak = new AtomicLong();
    // Guarded by this.
    private long held;
    private long heldByCalls;
    /** Bytes held by calls not yet answered: their read windows. */
    private long heldForCallsInFlight;
    /** Bytes of admitted answers that no waiter holds: they come back without more memory. */
    private long heldMoving;

    private long waiting;

    @Inject
    MemoryBudget(WorkerConfig config, MeterRegistry registry) {
        this(
                budgetOf(config.memoryBudget(), Runtime.getRuntime().maxMemory()),
                windowShareOf(
                        budgetOf(config.memoryBudget(), Runtime.getRuntime().maxMemory()),
                        Math.max(1, config.concurrency())),
                registry);
        Log.infof(
                "Memory budget: %d MiB for answers, images and references (%s), %d MiB of it kept for the read windows"
                        + " of calls in flight",
                budget >> 20,
                config.memoryBudget()
                        .map(value -> "IMAGE_WORKER_MEMORY_BUDGET=" + value)
                        .orElse("half of the maximum heap of "
                                + (Runtime.getRuntime().maxMemory() >> 20) + " MiB"),
                windowShare >> 20);
    }

    /** A budget of {@code budget} bytes, a quarter of it kept for read windows, reporting to {@code registry}. */
    public MemoryBudget(long budget, MeterRegistry registry) {
        this(budget, (long) (budget * WINDOW_SHARE), registry);
    }

    /**
     * A budget of {@code budget} bytes, of which {@code windowShare} are kept for the read windows of calls in flight,
     * reporting to {@code registry}.
     */
    public MemoryBudget(long budget, long windowShare, MeterRegistry registry) {
        if (budget <= 0 || windowShare < 0 || windowShare > budget) {
            throw new IllegalArgumentException("a memory budget must be positive, its window share within it");
        }
        this.budget = budget;
        this.windowShare = windowShare;
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
                "image_worker_memory_reserved",
                MemoryBudget::reservedForCalls,
                "Bytes reserved by gateway calls not yet answered (the read window each holds while it waits), part"
                        + " of image_worker_memory_held");
        bytesGauge(
                registry,
                "image_worker_memory_waiting",
                MemoryBudget::waiting,
                "Bytes asked for and waiting for the budget: answers paused on the wire, calls not sent, references"
                        + " not read");
        this.waits = Timer.builder("image_worker_memory_wait")
                .description("Time work waited for the memory budget")
                .register(registry);
    }

    /** A gauge of bytes this budget reads from itself ({@link WorkerMetrics#gauge}). */
    private void bytesGauge(
            MeterRegistry registry, String name, ToDoubleFunction<MemoryBudget> value, String description) {
        WorkerMetrics.gauge(name, this, value, description).baseUnit("bytes").register(registry);
    }

    /**
     * The part of {@code budget} kept for the read windows of {@code concurrency} calls in flight: a window each, at
     * most {@value #WINDOW_SHARE} of the budget.
     */
    static long windowShareOf(long budget, int concurrency) {
        return Math.min((long) (budget * WINDOW_SHARE), concurrency * READ_WINDOW);
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

    /** Bytes held by gateway calls not yet answered: their read windows. */
    public synchronized long reservedForCalls() {
        return heldForCallsInFlight;
    }

    /** Leases waiting now. */
    public synchronized int waiters() {
        return queue.size() + windows.size() + answers.size();
    }

    /** Answers waiting now: calls whose answer is paused on the wire until its bytes are admitted. */
    public synchronized int answersWaiting() {
        return answers.size();
    }

    /** The leases' bytes change by {@code delta}; the caller holds the lock. */
    private void change(Lease lease, long delta) {
        long before = lease.moving();
        long inFlightBefore = lease.inFlight();
        lease.bytes += delta;
        held += delta;
        if (lease.kind == Kind.CALL) {
            heldByCalls += delta;
        }
        heldMoving += lease.moving() - before;
        heldForCallsInFlight += lease.inFlight() - inFlightBefore;
        peak.accumulateAndGet(held, Math::max);
    }

    /** {@code lease}'s state changes by {@code step}; what it counts as is kept up to date. The caller holds the lock. */
    private void transition(Lease lease, Runnable step) {
        long before = lease.moving();
        long inFlightBefore = lease.inFlight();
        step.run();
        heldMoving += lease.moving() - before;
        heldForCallsInFlight += lease.inFlight() - inFlightBefore;
    }

    /** Grants what the rules allow, each queue in order, answers first; emits outside the lock. */
    private void grantWaiting() {
        ArrayDeque<Waiter> granted = new ArrayDeque<>();
        synchronized (this) {
            boolean more = true;
            while (more) {
                more = grantHead(answers, granted) || grantHead(windows, granted) || grantHead(queue, granted);
            }
        }
        granted.forEach(waiter -> waiter.emitter.complete(null));
    }

    /** Grants the head of {@code waiters} if the rules let it; whether they did. The caller holds the lock. */
    private boolean grantHead(ArrayDeque<Waiter> waiters, ArrayDeque<Waiter> granted) {
        Waiter head = waiters.peek();
        if (head == null || !grantable(head)) {
            return false;
        }
        grant(waiters.poll(), granted);
        return true;
    }

    /** The queue {@code waiter} waits in. */
    private ArrayDeque<Waiter> queueOf(Waiter waiter) {
        return waiter.answer ? answers : waiter.lease.kind == Kind.CALL ? windows : queue;
    }

    /** Whether {@code waiter} may have its bytes now (the rules of the class comment). The caller holds the lock. */
    private boolean grantable(Waiter waiter) {
        if (held == 0) {
            return true;
        }
        long windowsHeld = heldForCallsInFlight;
        if (waiter.answer) {
            // Its own read window becomes part of the answer's bytes.
            long own = waiter.lease.inFlight();
            long room = budget - Math.max(windowShare, windowsHeld - own) - (held - windowsHeld);
            // Nothing held comes back without more memory: the first answer goes, over the budget if need be.
            return own + waiter.extra <= room || heldMoving == 0;
        }
        if (waiter.lease.kind == Kind.CALL) {
            return windowsHeld + waiter.extra <= windowShare
                    || (answers.isEmpty() && held + waiter.extra <= budget)
                    // Only inputs are held: they come back when their requests end, which takes calls.
                    || heldByCalls == 0;
        }
        return answers.isEmpty() && waiter.extra <= budget - Math.max(windowShare, windowsHeld) - (held - windowsHeld);
    }

    private void grant(Waiter waiter, ArrayDeque<Waiter> granted) {
        waiting -= waiter.extra;
        Lease lease = waiter.lease;
        transition(lease, () -> {
            lease.waiter = null;
            lease.answered |= waiter.answer;
        });
        if (!lease.closed) {
            change(lease, waiter.extra);
        }
        waits.record(Duration.ofNanos(System.nanoTime() - waiter.since));
        granted.add(waiter);
    }

    /** A wait for {@code extra} bytes; {@code answer}: for an answer already on the wire ({@link Lease#admit}). */
    private record Waiter(Lease lease, long extra, boolean answer, long since, UniEmitter<? super Void> emitter) {}

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
        /** Whether the answer of this lease's call was admitted: its bytes are read, decoded, stored, then given back. */
        private boolean answered;

        private Lease(Kind kind) {
            this.kind = kind;
        }

        /** Bytes of this lease that come back without more memory: an admitted answer's, while it waits for nothing. */
        private long moving() {
            return answered && waiter == null && !closed ? bytes : 0;
        }

        /** Bytes of this lease reserved for a call not yet answered: its read window. */
        private long inFlight() {
            return kind == Kind.CALL && !answered && !closed ? bytes : 0;
        }

        /**
         * Waits until this lease holds at least {@code total} bytes: at once when they fit, else when other leases have
         * given enough back (or by the rules above). Cancelling the returned {@code Uni} leaves the queue. For a call:
         * its reservation before it is sent (the lease counts as a call not yet answered from now on).
         */
        public Uni<Void> reserve(long total) {
            return wait(total, false);
        }

        /**
         * Waits until this lease holds at least {@code total} bytes for an answer already on the wire (its body, the
         * image decoded from it, or the image a {@code url} answer points to): before every reservation of {@link
         * #reserve}, and let through over the budget when nothing held would come back without more memory. Once
         * granted, the lease's bytes count as coming back on their own. Cancelling the returned {@code Uni} leaves the
         * queue.
         */
        public Uni<Void> admit(long total) {
            return wait(total, true);
        }

        private Uni<Void> wait(long total, boolean answer) {
            return Uni.createFrom().emitter(emitter -> {
                boolean now;
                synchronized (MemoryBudget.this) {
                    if (!answer) {
                        transition(this, () -> answered = false);
                    }
                    long extra = total - bytes;
                    Waiter mine = new Waiter(this, extra, answer, System.nanoTime(), emitter);
                    if (closed || extra <= 0) {
                        transition(this, () -> answered |= answer);
                        now = true;
                    } else if (queueOf(mine).isEmpty() && grantable(mine)) {
                        transition(this, () -> answered |= answer);
                        change(this, extra);
                        now = true;
                    } else {
                        if (waiter != null) {
                            throw new IllegalStateException("a lease waits for one reservation at a time");
                        }
                        transition(this, () -> waiter = mine);
                        queueOf(mine).add(mine);
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
                left = mine != null && queueOf(mine).remove(mine);
                if (left) {
                    waiting -= mine.extra;
                    transition(this, () -> waiter = null);
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
                change(this, -bytes);
                transition(this, () -> closed = true);
            }
            leaveQueue();
            grantWaiting();
        }
    }
}
