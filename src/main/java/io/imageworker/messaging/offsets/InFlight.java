package io.imageworker.messaging.offsets;

import io.imageworker.messaging.offsets.PartitionWork.Start;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Shutdown;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The requests taken from the request topics and not yet ended: the one door between the intake and the offset
 * bookkeeping. A record taken ({@link #take}) runs, unless the worker is draining or a rebalance took its partition
 * away while it was on its way (it is left unacknowledged, and redelivered to the next consumer), or the partition's
 * last owner finished it already (it is acknowledged as it is: {@link PartitionWork}). A record that runs is in
 * progress ({@link RequestsInProgress}, the one registry of it, which this class alone starts and ends), its age watched
 * there for the commit strategy ({@link PauseAwareCommit}), until it is {@link Run#finished()}; its {@link Outcome}
 * goes to its partition's commits ({@link Run#end}). Both are told by the result sink alone ({@code
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
    private final RequestsInProgress progress;
    private final Shutdown shutdown;
    private volatile boolean draining;

    InFlight(PartitionWork partitions, RequestsInProgress progress, Shutdown shutdown, MeterRegistry registry) {
        this.partitions = partitions;
        this.progress = progress;
        this.shutdown = shutdown;
        Gauge.builder("image_worker_requests_in_progress", progress, RequestsInProgress::count)
                .description("Requests taken from the request topic and not yet finished (a request on a partition"
                        + " given up is counted until it stops)")
                .strongReference(true)
                .register(registry);
    }

    /** A record the request stream has taken: whether its request runs, and if so its way to its end. */
    public Run take(RecordCopy record) {
        if (draining) {
            return new Run(Start.LEFT, record);
        }
        Start start = partitions.started(record);
        Run run = new Run(start, record);
        if (start == Start.RUN) {
            progress.started(run);
        }
        return run;
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
     * Requests in progress now: taken to run and not yet {@link Run#finished()} ({@link RequestsInProgress#count}, the
     * one count of them): the gauge {@code image_worker_requests_in_progress} and what the drain waits for.
     */
    public int count() {
        return progress.count();
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

    /** How a record that ran ended ({@link Run#end}). */
    public enum Outcome {
        /** Its result was published and the record acknowledged: its partition may be committed past it. */
        ACKNOWLEDGED,
        /** Abandoned at shutdown, failed or given up: its partition is never committed past it (it is redelivered). */
        UNACKNOWLEDGED
    }

    /** One record taken; one that runs ({@link Start#RUN}) is in progress in {@link RequestsInProgress} until its end. */
    public final class Run extends RequestsInProgress.Taken {
        private final Start start;
        private final RecordCopy record;
        private final AtomicBoolean ended = new AtomicBoolean();
        private final AtomicBoolean over = new AtomicBoolean();

        private Run(Start start, RecordCopy record) {
            super(record.topic(), record.partition());
            this.start = start;
            this.record = record;
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
        @Override
        public void waiting() {
            partitions.waiting(record);
            if (start == Start.RUN) {
                progress.waiting(this);
            }
        }

        /** Its turn came, or it ended while waiting: a revocation waits for it, and its age counts from now. */
        @Override
        public void admitted() {
            if (start == Start.RUN) {
                progress.admitted(this);
            }
            partitions.admitted(record);
        }

        /**
         * Whether it may still go on here: the worker does not drain, and its partition was neither given to another
         * worker since it was taken nor is being taken away now.
         */
        @Override
        public boolean mayGoOn() {
            return !draining && partitions.mayStart(record);
        }

        /**
         * It waits for a chance to make a gateway call (a slot, a pause, the spend guard, a back-off): whether it may
         * still make one here ({@link PartitionWork#waitsToCall}). Before its first call a revocation does not wait
         * for it.
         */
        @Override
        public boolean waitsToCall() {
            return !draining && partitions.waitsToCall(record);
        }

        /**
         * A gateway call of it is about to leave: whether it may ({@link PartitionWork#callLeaves}). From a yes on, a
         * revocation of its partition waits for it to end.
         */
        @Override
        public boolean callLeaves() {
            return !draining && partitions.callLeaves(record);
        }

        /** It is in progress no more (acknowledged, failed, given up or cancelled): called once, for a run only. */
        public void finished() {
            if (start == Start.RUN && over.compareAndSet(false, true)) {
                progress.ended(this);
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
         * Waits until no request is under way or the grace is over (a record still waiting for its turn is not waited
         * for: from the drain's start it could start no call); from then on, what still runs must neither start a
         * gateway call nor end as a failure: it is redelivered.
         *
         * @return the requests still in progress, abandoned
         */
        public int await() {
            Log.infof("Shutting down: waiting up to %s for %d request(s) in progress", grace, progress.count());
            // The shutdown thread waits, not an event loop.
            progress.awaitNoneUnderWay(deadline);
            shutdown.abandonUnfinished();
            int left = progress.count();
            if (left > 0 && System.nanoTime() < deadline) {
                Log.infof(
                        "Shutting down: %d request(s) still waiting for their turn are not started; they are not"
                                + " committed and will be redelivered",
                        left);
            } else if (left > 0) {
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
