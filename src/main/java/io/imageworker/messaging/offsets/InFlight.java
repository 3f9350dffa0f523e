package io.imageworker.messaging.offsets;

import io.imageworker.messaging.offsets.PartitionWork.Start;
import io.imageworker.support.Shutdown;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The requests taken from the request topics and not yet ended: the one door between the intake and the offset
 * bookkeeping. A record taken ({@link #take}) runs, unless the worker is draining or a rebalance took its partition
 * away while it was on its way (it is left unacknowledged, and redelivered to the next consumer), or the partition's
 * last owner finished it already (it is acknowledged as it is: {@link PartitionWork}). A record that runs is counted,
 * and its age watched by the commit strategy ({@link PauseAwareCommit}), until it is {@link Run#finished()}; its
 * {@link Outcome} goes to its partition's commits ({@link Run#end}). Both are told by the result sink alone ({@code
 * messaging.results.ResultSink}, {@code ArchitectureTest}).
 *
 * <p>The graceful drain ({@link #drain}): from its start no record is taken and no gateway call starts ({@link
 * Shutdown}); the requests in progress get the shutdown grace to finish, and those still running then are abandoned:
 * they end neither as a failure nor acknowledged, so their records are redelivered, never lost and never failed by the
 * shutdown. Only the shutdown thread waits, never an event loop.
 */
@ApplicationScoped
public class InFlight {

    private final PartitionWork partitions;
    private final PauseAwareCommit commit;
    private final Shutdown shutdown;
    private final AtomicInteger count = new AtomicInteger();
    private volatile boolean draining;

    InFlight(
            PartitionWork partitions,
            @Identifier(PauseAwareCommit.STRATEGY) PauseAwareCommit commit,
            Shutdown shutdown,
            MeterRegistry registry) {
        this.partitions = partitions;
        this.commit = commit;
        this.shutdown = shutdown;
        Gauge.builder("image_worker_requests_in_progress", count, AtomicInteger::get)
                .description("Requests taken from the request topic and not yet finished (a request on a partition"
                        + " given up is counted until it stops)")
                .strongReference(true)
                .register(registry);
    }

    /** A record the request stream has taken: whether its request runs, and if so its way to its end. */
    public Run take(RecordCopy record) {
        if (draining) {
            return new Run(Start.LEFT, record, null);
        }
        Start start = partitions.started(record);
        if (start != Start.RUN) {
            return new Run(start, record, null);
        }
        count.incrementAndGet();
        return new Run(start, record, commit.track());
    }

    /**
     * Completes once {@code record} may be taken, its partition's records finished out of order kept within what a
     * commit's metadata holds ({@link PartitionWork#within}).
     */
    public Uni<Void> within(RecordCopy record) {
        return partitions.within(record);
    }

    /**
     * {@code listener} is told the partitions each rebalance takes from this worker, as it takes them ({@link
     * PartitionWork#whenReleased}).
     */
    public void whenReleased(Consumer<Collection<TopicPartition>> listener) {
        partitions.whenReleased(listener);
    }

    /** Whether {@code record} lies within its partition's window now ({@link PartitionWork#fitsNow}). */
    public boolean fitsNow(RecordCopy record) {
        return partitions.fitsNow(record);
    }

    /**
     * Requests in progress now: taken to run and not yet {@link Run#finished()}. The one count of them, the gauge
     * {@code image_worker_requests_in_progress} and what the drain waits for.
     */
    public int count() {
        return count.get();
    }

    /**
     * Starts the graceful drain: from now on no record is taken (each is left unacknowledged, for redelivery) and no
     * gateway call starts; {@link Drain#await} then waits for the requests in progress, at most {@code grace} from
     * now.
     */
    public Drain drain(Duration grace) {
        draining = true;
        // No gateway call starts from now on: the grace is sized for the calls in flight, not for new ones.
        shutdown.startDraining();
        return new Drain(grace, System.nanoTime() + grace.toNanos());
    }

    private void finished() {
        if (count.decrementAndGet() == 0 && draining) {
            synchronized (count) {
                count.notifyAll();
            }
        }
    }

    /** How a record that ran ended ({@link Run#end}). */
    public enum Outcome {
        /** Its result was published and the record acknowledged: its partition may be committed past it. */
        ACKNOWLEDGED,
        /** Abandoned at shutdown, failed or given up: its partition is never committed past it (it is redelivered). */
        UNACKNOWLEDGED
    }

    /** One record taken. */
    public final class Run {
        private final Start start;
        private final RecordCopy record;
        private final PauseAwareCommit.Tracked tracked;
        private final AtomicBoolean ended = new AtomicBoolean();

        private Run(Start start, RecordCopy record, PauseAwareCommit.Tracked tracked) {
            this.start = start;
            this.record = record;
            this.tracked = tracked;
        }

        /** What becomes of it: {@link Start#RUN} is followed by {@link #end} (but when cancelled) and {@link #finished}. */
        public Start start() {
            return start;
        }

        /** The record taken: a copy of its own, told apart from another delivery of the same record. */
        public RecordCopy record() {
            return record;
        }

        /**
         * Its request ended with {@code outcome}: told once, by the result sink ({@code messaging.results.ResultSink}).
         * The transaction that commits its result with its offset tells it, before anything else reads its partition's
         * progress; when no transaction ends it (transactions off, or its request failed or was given up), the sink
         * tells it as it acknowledges the record, or does not. A second end is not told to the partition.
         */
        public void end(Outcome outcome) {
            if (ended.compareAndSet(false, true)) {
                partitions.ended(record, outcome == Outcome.ACKNOWLEDGED);
            }
        }

        /**
         * It waits for its turn to go into progress (the read-ahead, {@code messaging.intake.ReadAhead}): a revocation does not
         * wait for it (its partition's next owner takes it), the committed offset never passes it, and the time it
         * waits does not count as a stuck record.
         */
        public void waiting() {
            partitions.waiting(record);
            if (tracked != null) {
                tracked.waiting();
            }
        }

        /** Its turn came, or it ended while waiting: a revocation waits for it, and its age counts from now. */
        public void admitted() {
            if (tracked != null) {
                tracked.admitted();
            }
            partitions.admitted(record);
        }

        /**
         * Whether it may still go on here: the worker does not drain, and its partition was neither given to another
         * worker since it was taken nor is being taken away now.
         */
        public boolean mayGoOn() {
            return !draining && partitions.mayStart(record);
        }

        /**
         * It waits for a chance to make a gateway call (a slot, a pause, the spend guard, a back-off): whether it may
         * still make one here ({@link PartitionWork#waitsToCall}). Before its first call a revocation does not wait
         * for it.
         */
        public boolean waitsToCall() {
            return !draining && partitions.waitsToCall(record);
        }

        /**
         * A gateway call of it is about to leave: whether it may ({@link PartitionWork#callLeaves}). From a yes on, a
         * revocation of its partition waits for it to end.
         */
        public boolean callLeaves() {
            return !draining && partitions.callLeaves(record);
        }

        /** It is in progress no more (acknowledged, failed, given up or cancelled): called once, for a run only. */
        public void finished() {
            if (tracked != null) {
                tracked.done();
                InFlight.this.finished();
            }
        }
    }

    /** A graceful drain started. */
    public final class Drain {
        private final Duration grace;
        private final long deadline;

        private Drain(Duration grace, long deadline) {
            this.grace = grace;
            this.deadline = deadline;
        }

        /**
         * Waits until no request is in progress or the grace is over; from then on, what still runs must neither start
         * a gateway call nor end as a failure: it is redelivered.
         *
         * @return the requests still in progress, abandoned
         */
        public int await() {
            Log.infof("Shutting down: waiting up to %s for %d request(s) in progress", grace, count.get());
            synchronized (count) {
                long remaining;
                while (count.get() > 0 && (remaining = deadline - System.nanoTime()) > 0) {
                    try {
                        // The shutdown thread waits, not an event loop; the last request to finish notifies.
                        count.wait(Math.max(1, remaining / 1_000_000));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
            shutdown.abandonUnfinished();
            int left = count.get();
            if (left > 0) {
                Log.warnf(
                        "Shutdown grace over: %d request(s) did not finish; they are not committed and will be"
                                + " redelivered",
                        left);
            } else {
                Log.info("Every request in progress has finished; committing and closing");
            }
            return left;
        }
    }
}
