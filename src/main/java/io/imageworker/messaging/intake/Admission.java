package io.imageworker.messaging.intake;

import io.imageworker.config.ProducerWeights;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.Lane;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.RecordCopy;
import io.imageworker.support.WorkerMetrics;
import io.imageworker.turns.FairTurns;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * When a record taken from a lane goes into progress ({@link ReadAhead} coordinates): once its partition's window
 * reaches it, in its producer's turn, and its bytes bounded while it waits.
 *
 * <p>The turns: {@code IMAGE_WORKER_MAX_IN_PROGRESS} places per lane go round-robin among the producers with waiting
 * records, weighted by {@code IMAGE_WORKER_PRODUCER_WEIGHTS} ({@link FairTurns} of a fixed number of places, with its
 * cancel-safe claims, the same turns the gateway's calls wait in); a producer held by its cap gets none meanwhile
 * ({@link SteppingAside}).
 *
 * <p>The bytes: the heap the waiting records of a lane hold is bounded to a sixteenth of the memory budget ({@link
 * #BUDGET_SHARE}; beside it, not in it): each record is charged twice its payload, its bytes and the parsed JSON its
 * turn needs (to know its producer), and {@link #RECORD_OVERHEAD} for the rest it holds, so both lanes together hold
 * at most an eighth of the budget. When the bound is reached, the lane takes no more records until one goes into
 * progress (any record alone goes), and its Kafka polling pauses as it does when the places are full.
 *
 * <p>The window: no record goes into progress further than its partition's window above the partition's oldest
 * pending record ({@link InFlight#within}), so that a commit's metadata names all that finished above it: until the
 * window reaches it, it waits as read ahead, and the records of other partitions go by.
 */
@ApplicationScoped
public class Admission {

    /** Each lane's waiting records hold at most this fraction of the memory budget (both lanes: twice as much). */
    static final int BUDGET_SHARE = 16;

    /**
     * The heap a waiting record holds beside its payload and its JSON tree: Kafka's record, the connector's message,
     * the request's span, context snapshots, the reactive stages waiting for its turn and the bookkeeping of its
     * offset. Measured at about 5 KB a record (the live heap's class histogram, {@code jcmd <pid> GC.class_histogram},
     * with 1000 small records waiting for their turn against none), charged with a margin.
     */
    static final long RECORD_OVERHEAD = 6 * 1024;

    private final Map<Lane, FairTurns> turns = new EnumMap<>(Lane.class);
    private final Map<Lane, WaitingBytes> bytes = new EnumMap<>(Lane.class);
    /** Records of each lane waiting for their partition's window to reach them ({@link InFlight#within}). */
    private final Map<Lane, AtomicInteger> atWindow = new EnumMap<>(Lane.class);
    /** Where a record waits before its turn, until its partition's window reaches it ({@link InFlight#within}). */
    private final Function<RecordCopy, Uni<Void>> window;

    /**
     * {@code IMAGE_WORKER_MAX_IN_PROGRESS} places per lane, shared by {@code IMAGE_WORKER_PRODUCER_WEIGHTS}; the
     * waiting records' bytes at most {@link #BUDGET_SHARE} of {@code memory}; each record's turn asked for once {@code
     * inFlight}'s window lets it.
     */
    @Inject
    Admission(WorkerConfig config, MemoryBudget memory, InFlight inFlight, MeterRegistry registry) {
        this.window = inFlight::within;
        ProducerWeights weights = ProducerWeights.of(config.producerWeights());
        long bound = Math.max(1, memory.budget() / BUDGET_SHARE);
        for (Lane lane : Lane.values()) {
            turns.put(lane, new FairTurns(config.inProgressLimit(), 0, weights));
            bytes.put(lane, new WaitingBytes(bound));
            atWindow.put(lane, new AtomicInteger());
            WorkerMetrics.gauge(
                            "image_worker_requests_waiting_turn",
                            this,
                            admission -> admission.waiting(lane),
                            "Records taken from a request topic that wait for a place in progress (read ahead)")
                    .tag("lane", lane.name().toLowerCase(Locale.ROOT))
                    .register(registry);
        }
    }

    /** Gives no turn to a producer while {@code held} says so ({@link #recheck()} gives them again after). */
    void holdWhile(Predicate<String> held) {
        turns.values().forEach(turn -> turn.holdWhile(held));
    }

    /** Gives the free places to records whose producer is held no more. */
    void recheck() {
        turns.values().forEach(FairTurns::recheck);
    }

    /** Records of {@code lane} waiting for their turn now (or for their partition's window, before it). */
    public int waiting(Lane lane) {
        return turns.get(lane).waiting() + atWindow.get(lane).get();
    }

    /** Records of {@code lane} of {@code producer} waiting for their turn now. */
    int waiting(Lane lane, String producer) {
        return turns.get(lane).waiting(producer);
    }

    /** Records of {@code producer} waiting for their turn now, in both lanes. */
    int waiting(String producer) {
        int waiting = 0;
        for (FairTurns turn : turns.values()) {
            waiting += turn.waiting(producer);
        }
        return waiting;
    }

    /** Records of {@code lane} in progress now (those that had their turn and have not ended). */
    public int inProgress(Lane lane) {
        return turns.get(lane).inFlight();
    }

    /**
     * The lane's records as they may be taken: each one only once the waiting records' bytes leave room for it (or
     * none waits). The stage holds one record while it waits, and asks Kafka's connector for no more meanwhile.
     */
    Multi<Message<byte[]>> taken(Lane lane, Multi<Message<byte[]>> records) {
        WaitingBytes waiting = bytes.get(lane);
        return records.onItem().transformToUniAndConcatenate(message -> waiting.take(size(message))
                .replaceWith(message));
    }

    /** The bytes {@code message}, taken from {@code lane}, holds until it gives them back (once). */
    Held bytesHeld(Lane lane, Message<byte[]> message) {
        WaitingBytes waiting = bytes.get(lane);
        long size = size(message);
        return new Held(() -> waiting.give(size));
    }

    /**
     * What a waiting record holds: its payload, the JSON parsed from it (a tree of about the same size), and what
     * every record taken holds whatever its size ({@link #RECORD_OVERHEAD}).
     */
    private static long size(Message<byte[]> message) {
        byte[] payload = message.getPayload();
        return RECORD_OVERHEAD + (payload == null ? 0 : 2L * payload.length);
    }

    /**
     * {@code goIntoProgress} of {@code record} of {@code lane}, in {@code producer}'s turn, once its partition's window
     * reaches it; meanwhile it waits as read ahead.
     */
    <T> Uni<T> inTurn(Lane lane, RecordCopy record, String producer, Function<FairTurns.Turn, Uni<T>> goIntoProgress) {
        AtomicInteger windowWaits = atWindow.get(lane);
        windowWaits.incrementAndGet();
        Held atTheWindow = new Held(windowWaits::decrementAndGet);
        return window.apply(record)
                .onTermination()
                .invoke(atTheWindow::giveBack)
                .chain(() -> turns.get(lane).run(Lane.NORMAL, producer, goIntoProgress));
    }
}
