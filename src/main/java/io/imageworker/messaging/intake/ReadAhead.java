package io.imageworker.messaging.intake;

import io.imageworker.ImageRequest;
import io.imageworker.Lane;
import io.imageworker.config.ProducerWeights;
import io.imageworker.config.WorkerConfig;
import io.imageworker.gateway.PlacesInProgress;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.RecordCopy;
import io.imageworker.processing.ProducerLines;
import io.imageworker.processing.RequestStates;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.DaemonThreads;
import io.imageworker.support.Shutdown;
import io.imageworker.support.WorkerMetrics;
import io.imageworker.turns.FairTurns;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The read-ahead of each lane (contract v1.2, fair shares): records are taken from Kafka beyond the requests in
 * progress and wait for their turn, so that one producer's backlog sitting in the partitions before another's requests
 * does not hold them back.
 *
 * <p>Each lane takes up to {@code IMAGE_WORKER_MAX_IN_PROGRESS} + {@code IMAGE_WORKER_READ_AHEAD} records at once (its
 * places, {@link AtMostInFlight}). A record taken waits for a place in progress ({@code IMAGE_WORKER_MAX_IN_PROGRESS} of them per
 * lane, as before); places go round-robin among the producers with waiting records, weighted by {@code
 * IMAGE_WORKER_PRODUCER_WEIGHTS} ({@link FairTurns} of a fixed number of places does the turns, with its cancel-safe
 * claims, the same turns the gateway's calls wait in). A waiting record holds its bytes and nothing else: no ledger
 * lookup, no reference read, no memory budget, no call slot; only once in progress does it do what a request did before. The heap the waiting records of a lane
 * hold is bounded too, to a sixteenth of the memory budget ({@link #BUDGET_SHARE}; beside it, not in it): each record
 * is charged twice its payload, its bytes and the parsed JSON its turn needs (to know its producer), and {@link
 * #RECORD_OVERHEAD} for the rest it holds, so both lanes together hold at most an eighth of the budget. When the bound
 * is reached, the lane takes no more records until one goes into progress (any record alone goes), and its Kafka
 * polling pauses as it does when the places are full. Nor does a record go into progress further than its partition's window
 * above the partition's oldest pending record ({@link InFlight#within}), so that a commit's metadata names all that
 * finished above it: until the window reaches it, it waits as read ahead, and the records of other partitions go by.
 *
 * <p>Commits stay correct: a waiting record is started in {@code offsets.PartitionWork} as soon as it is taken (the committed
 * offset never passes it), but a revocation does not wait for it ({@link InFlight.Run#waiting}): it is left to the
 * partition's next owner, leaves its producer's line at once ({@link #released}), and if its turn comes after that it
 * is dropped unacknowledged. The time it waits for its turn
 * does not count as a stuck record (the commit strategy). At shutdown a record still waiting ends at its turn at
 * once, unacknowledged, and is redelivered.
 *
 * <p>Parking (fair shares at any backlog, {@link #parkedOrInTurn}): a record of the request topic beyond its
 * partition's window, or of a producer that has its share waiting already ({@link ParkingDecision}, decided in {@code
 * messaging.parking.Parking}), takes no place here: the
 * consumer parks it (its copy to the parked topic, committed with its offset), and it comes back from the parked topic
 * to take its turn like any other. A copy of a request parked here lately is parked too, after the first copy, so
 * that one replica reads both.
 *
 * <p>Longer than 400 lines: the turns, the bytes, the window, parking and the caps' waits aside are one decision about
 * each record taken, and share its bookkeeping.
 *
 * <p>Per-producer caps (contract v1.2, {@code IMAGE_WORKER_BUDGET_PER_PRODUCER}): a producer over its own cap (as far
 * as this replica has read the shared budget log, {@link BudgetGuard#holds}) gets no turn: its records keep waiting
 * here, bounded as above, while the places go to the others; its turns come again when its window allows another call
 * (checked every {@link #RECHECK}). A request of it already in progress whose call its cap refuses (another replica
 * took the last places meanwhile) gives its place back while it waits ({@link PlacesInProgress}) and takes it again,
 * first of its producer, once its call has a place in the budget: a capped producer never holds places in progress
 * while it waits for its window, whatever it has in them (its memory, if it loaded references, it keeps).
 */
@ApplicationScoped
public class ReadAhead implements PlacesInProgress {

    /** How often the turns of producers held by their cap are looked at again. */
    static final Duration RECHECK = Duration.ofMillis(250);

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
    /** The turn of each request in progress, by id (the first, if copies of one id run at once). */
    private final Map<String, Placed> inProgress = new ConcurrentHashMap<>();
    /**
     * The requests waiting for their turn now, each with what takes it out of its producer's line and out of the
     * queued requests: given back at its turn, at its end, or at once when its partition goes to another worker
     * ({@link #released}).
     */
    private final Map<InFlight.Run, Held> waitingInLine = new ConcurrentHashMap<>();
    /** The requests waiting aside now, each with the signal that cuts its wait short (see {@link #of}). */
    private final Map<Placed, CompletableFuture<Void>> aside = new ConcurrentHashMap<>();

    /** Where a record waits before its turn, until its partition's window reaches it ({@link InFlight#within}). */
    private final Function<RecordCopy, Uni<Void>> window;
    /** Where a status query finds the requests waiting for their turn here ({@code queued}). */
    private final RequestStates states;
    /** Which records offered for parking are parked instead of read ahead ({@code messaging.parking.Parking}). */
    private final ParkingDecision parking;

    private ScheduledExecutorService rechecks;

    @Inject
    ReadAhead(
            WorkerConfig config,
            MemoryBudget memory,
            MeterRegistry registry,
            BudgetGuard budget,
            Shutdown shutdown,
            InFlight inFlight,
            RequestStates states,
            ParkingDecision parking) {
        this(
                config.inProgressLimit(),
                ProducerWeights.of(config.producerWeights()),
                Math.max(1, memory.budget() / BUDGET_SHARE),
                inFlight::within,
                states,
                parking);
        inFlight.whenReleased(this::released);
        if (!budget.producerBudgets().isEmpty()) {
            holdWhile(budget::holds, shutdown);
            budget.countHeldInIntake(producer -> {
                int waiting = 0;
                for (FairTurns turn : turns.values()) {
                    waiting += turn.waiting(producer);
                }
                return waiting;
            });
            rechecks = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("image-worker-intake-rechecks"));
            rechecks.scheduleWithFixedDelay(
                    this::recheck, RECHECK.toMillis(), RECHECK.toMillis(), TimeUnit.MILLISECONDS);
        }
        for (Lane lane : Lane.values()) {
            WorkerMetrics.gauge(
                            "image_worker_requests_waiting_turn",
                            this,
                            intake -> intake.waiting(lane),
                            "Records taken from a request topic that wait for a place in progress (read ahead)")
                    .tag("lane", lane.name().toLowerCase(Locale.ROOT))
                    .register(registry);
        }
    }

    /** {@code inProgress} places per lane, shared by {@code weights}, the waiting records' bytes at most {@code bytes}. */
    ReadAhead(int inProgress, ProducerWeights weights, long bytes) {
        this(inProgress, weights, bytes, record -> Uni.createFrom().voidItem(), new RequestStates());
    }

    /**
     * The same, each record's turn asked for once {@code window} lets it, its request read as queued in {@code
     * states} until its turn; no record offered for parking is parked.
     */
    ReadAhead(
            int inProgress,
            ProducerWeights weights,
            long bytes,
            Function<RecordCopy, Uni<Void>> window,
            RequestStates states) {
        this(inProgress, weights, bytes, window, states, ParkingDecision.NEVER);
    }

    /** The same, records offered for parking parked as {@code parking} says. */
    ReadAhead(
            int inProgress,
            ProducerWeights weights,
            long bytes,
            Function<RecordCopy, Uni<Void>> window,
            RequestStates states,
            ParkingDecision parking) {
        this.window = window;
        this.states = states;
        this.parking = parking;
        for (Lane lane : Lane.values()) {
            turns.put(lane, new FairTurns(inProgress, 0, weights));
            this.bytes.put(lane, new WaitingBytes(bytes));
            this.atWindow.put(lane, new AtomicInteger());
        }
    }

    /**
     * Gives no turn to a producer while {@code held} says so ({@link #recheck()} gives them again after), until the
     * worker drains: then every waiting record has its turn, to end it (left unacknowledged), so that the drain does not
     * wait for records whose producer's window is hours away.
     */
    void holdWhile(Predicate<String> held, Shutdown shutdown) {
        turns.values().forEach(turn -> turn.holdWhile(producer -> shutdown.callsAllowed() && held.test(producer)));
    }

    /**
     * Gives the free places to records whose producer is held no more, and ends the waits aside of requests whose
     * partition went to another worker (or that the drain ends).
     */
    void recheck() {
        aside.forEach((placed, gone) -> {
            if (!placed.run().mayGoOn()) {
                gone.complete(null);
            }
        });
        turns.values().forEach(FairTurns::recheck);
    }

    /**
     * A rebalance took {@code partitions} away: the requests of theirs waiting for their turn are their new owner's
     * now, so they leave their producers' lines and read queued here no more at once, not at their turn, which may
     * come long after (behind a deep read-ahead, or a producer held by its cap). Each still ends at its turn, given
     * up ({@link GivenUp}).
     */
    void released(Collection<TopicPartition> partitions) {
        waitingInLine.forEach((run, inLine) -> {
            RecordCopy record = run.record();
            if (partitions.contains(new TopicPartition(record.topic(), record.partition()))
                    && waitingInLine.remove(run, inLine)) {
                inLine.giveBack();
            }
        });
    }

    @PreDestroy
    void stop() {
        if (rechecks != null) {
            rechecks.shutdownNow();
        }
    }

    /**
     * How request {@code requestId}, in progress here, waits for its producer's cap: its place in progress given back
     * meanwhile and taken again first of its producer after it; its record waiting again meanwhile as one read ahead
     * ({@link InFlight.Run#waiting}: a revocation does not wait for it, and the wait does not count as a stuck
     * record). If its partition goes to another worker meanwhile, the wait ends (at the next {@link #recheck()}) and
     * so does the request, as {@link AbandonedException}: left unacknowledged for the new owner, no call made.
     */
    @Override
    public BudgetGuard.Aside of(String requestId) {
        Placed placed = requestId == null ? null : inProgress.get(requestId);
        if (placed == null) {
            return BudgetGuard.Aside.NONE;
        }
        return new BudgetGuard.Aside() {
            @Override
            public <T> Uni<T> around(Uni<T> wait) {
                CompletableFuture<Void> gone = new CompletableFuture<>();
                Uni<T> handedOver = Uni.createFrom().completionStage(gone).chain(ignored -> Uni.createFrom()
                        .<T>failure(AbandonedException.givenUp(
                                requestId,
                                "it waited for its producer's budget when its partition went to another"
                                        + " worker (or the worker drains)")));
                return Uni.createFrom()
                        .deferred(() -> {
                            placed.run().waiting();
                            aside.put(placed, gone);
                            return placed.turn()
                                    .aside(Uni.join().first(wait, handedOver).toTerminate());
                        })
                        .onTermination()
                        .invoke(() -> {
                            aside.remove(placed);
                            placed.run().admitted();
                        })
                        .chain(item -> placed.run().mayGoOn()
                                ? Uni.createFrom().item(item)
                                : Uni.createFrom()
                                        .failure(AbandonedException.givenUp(
                                                requestId,
                                                "its partition went to another worker while it waited for its"
                                                        + " producer's budget (or the worker drains)")));
            }
        };
    }

    @Override
    public boolean waitsToCall(String requestId) {
        Placed placed = requestId == null ? null : inProgress.get(requestId);
        return placed == null || placed.run().waitsToCall();
    }

    @Override
    public boolean callLeaves(String requestId) {
        Placed placed = requestId == null ? null : inProgress.get(requestId);
        return placed == null || placed.run().callLeaves();
    }

    /** A request in progress: its turn (its place) and its record's run. */
    private record Placed(FairTurns.Turn turn, InFlight.Run run) {}

    /** Records of {@code lane} waiting for their turn now (or for their partition's window, before it). */
    public int waiting(Lane lane) {
        return turns.get(lane).waiting() + atWindow.get(lane).get();
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

    /**
     * What a waiting record holds: its payload, the JSON parsed from it (a tree of about the same size), and what
     * every record taken holds whatever its size ({@link #RECORD_OVERHEAD}).
     */
    private static long size(Message<byte[]> message) {
        byte[] payload = message.getPayload();
        return RECORD_OVERHEAD + (payload == null ? 0 : 2L * payload.length);
    }

    /**
     * A record taken from {@code lane} as it asks for its turn: its message (for the bytes it holds), its copy in
     * {@code offsets.PartitionWork} and its run there; and, for a request, its id and its {@link Producer} (of a type of
     * its own, so that the two cannot be swapped); {@link #notARequest} for a record that is none.
     */
    public record Asking(
            Lane lane,
            Message<byte[]> message,
            RecordCopy record,
            InFlight.Run run,
            String requestId,
            Producer producer) {

        /** A record that is no request (its turn is the default producer's). */
        public static Asking notARequest(Lane lane, Message<byte[]> message, RecordCopy record, InFlight.Run run) {
            return new Asking(lane, message, record, run, null, Producer.DEFAULT);
        }
    }

    /** The producer whose turns a record waits for: the one it names, or the default one when it names none. */
    public record Producer(String name) {

        /** The producer of the records that name none. */
        public static final Producer DEFAULT = new Producer(ImageRequest.DEFAULT_PRODUCER);

        /** {@code name}, or the default producer when it is null. */
        public static Producer of(String name) {
            return name == null ? DEFAULT : new Producer(name);
        }
    }

    /**
     * {@code park} of the record {@code asking} at once, without a turn, when it is to be parked ({@link ParkingDecision}:
     * beyond its partition's window, its producer has its share waiting already, or it is a copy of a request parked
     * here lately); else {@code work} in its turn,
     * as {@link #inTurn(Asking, Supplier)}. {@code park} holds the record's bytes until it ends, nothing else.
     */
    public <T> Uni<T> parkedOrInTurn(Asking asking, Supplier<Uni<T>> park, Supplier<Uni<T>> work) {
        return parkedOrInTurn(asking, park, null, work);
    }

    /**
     * {@link #parkedOrInTurn(Asking, Supplier, Supplier)}, but {@code unparkable} instead of {@code park} when it is
     * not null and the record is to be parked: its copy would be larger than Kafka takes ({@code
     * parking.RequestParking#tooLargeToPark}), so it is answered at once, without a turn, as a park would have been
     * done; it is not counted as parked. A record that is not to be parked goes in its turn as ever.
     */
    public <T> Uni<T> parkedOrInTurn(
            Asking asking, Supplier<Uni<T>> park, Supplier<Uni<T>> unparkable, Supplier<Uni<T>> work) {
        String why = whyParked(asking);
        if (why == null) {
            return inTurn(asking, work);
        }
        Held bytesHeld = new Held(() -> bytes.get(asking.lane()).give(size(asking.message())));
        if (unparkable != null) {
            return Uni.createFrom().<T>deferred(unparkable::get).onTermination().invoke(bytesHeld::giveBack);
        }
        String requestId = asking.requestId();
        // Known by its name: <producer>/<requestId> where ids are unique within their producer.
        String name = requestId == null ? null : states.name(asking.producer().name(), requestId);
        return Uni.createFrom()
                .<T>deferred(() -> {
                    parking.underWay(name);
                    return park.get();
                })
                .invoke(() -> parking.parked(name, why))
                .onTermination()
                .invoke(() -> {
                    parking.over(name);
                    bytesHeld.giveBack();
                });
    }

    /**
     * Why the record {@code asking} is parked ({@link ParkingDecision#why}), or null when it goes in its turn. The
     * request is named by its name ({@code RequestStates.name}): in topic mode another producer's request of the id is
     * another request.
     */
    private String whyParked(Asking asking) {
        String requestId = asking.requestId();
        return parking.why(
                asking.record(),
                requestId == null ? null : states.name(asking.producer().name(), requestId),
                turns.get(asking.lane()).waiting(asking.producer().name()));
    }

    /**
     * {@code work} of the record {@code asking}, once it is its turn; the record waits meanwhile, without counting as
     * stuck ({@link InFlight.Run#waiting}). Fails with {@link GivenUp} instead when, by its turn, the worker drains or
     * the record's partition was given to another worker. While it runs, the request can give its place back while
     * its producer's cap holds it ({@link #of(String)}).
     */
    public <T> Uni<T> inTurn(Asking asking, Supplier<Uni<T>> work) {
        Lane lane = asking.lane();
        String requestId = asking.requestId();
        String name = requestId == null ? null : states.name(asking.producer().name(), requestId);
        InFlight.Run run = asking.run();
        WaitingBytes waiting = bytes.get(lane);
        long size = size(asking.message());
        Held bytesHeld = new Held(() -> waiting.give(size));
        Held queued = requestId == null
                ? Held.NOTHING
                : new Held(() -> states.admitted(states.name(asking.producer().name(), requestId)));
        Held lineHeld = inLine(asking, queued);
        run.waiting();
        AtomicReference<Placed> placed = new AtomicReference<>();
        Function<FairTurns.Turn, Uni<T>> goIntoProgress = turn -> {
            waitingInLine.remove(run);
            bytesHeld.giveBack();
            queued.giveBack();
            run.admitted();
            if (!run.mayGoOn()) {
                return Uni.createFrom()
                        .failure(new GivenUp(
                                asking.record(),
                                "the worker drains, or its partition went to another worker meanwhile"));
            }
            Placed mine = new Placed(turn, run);
            // By the request's name: two producers' requests of one id are two places (topic mode).
            if (requestId != null && inProgress.putIfAbsent(name, mine) == null) {
                placed.set(mine);
            }
            return work.get();
        };
        AtomicInteger windowWaits = atWindow.get(lane);
        windowWaits.incrementAndGet();
        Held atTheWindow = new Held(windowWaits::decrementAndGet);
        // Its turn is asked for once its partition's window reaches it; meanwhile it waits as read ahead.
        return window.apply(asking.record())
                .onTermination()
                .invoke(atTheWindow::giveBack)
                .chain(() -> turns.get(lane).run(Lane.NORMAL, asking.producer().name(), goIntoProgress))
                .onTermination()
                .invoke(() -> {
                    waitingInLine.remove(run);
                    bytesHeld.giveBack();
                    queued.giveBack();
                    lineHeld.giveBack();
                    run.admitted();
                    Placed mine = placed.get();
                    if (mine != null) {
                        inProgress.remove(name, mine);
                    }
                });
    }

    /**
     * The request of {@code asking} joins its producer's line, for a status query, and reads queued ({@code queued}
     * gives that back): it stands in its line until its first call leaves or it ends, or its partition goes to another
     * worker while it waits for its turn ({@link #released}). What takes it out of its line is returned.
     */
    private Held inLine(Asking asking, Held queued) {
        String requestId = asking.requestId();
        if (requestId == null) {
            return Held.NOTHING;
        }
        // Known by its name: <producer>/<requestId> where ids are unique within their producer.
        String name = states.name(asking.producer().name(), requestId);
        ProducerLines.Place place =
                states.inLine(name, asking.lane(), asking.producer().name());
        Held line = new Held(() -> states.outOfLine(place));
        states.waiting(name);
        waitingInLine.put(asking.run(), new Held(() -> {
            queued.giveBack();
            line.giveBack();
        }));
        return line;
    }

    /**
     * A record whose turn came when it could no longer run here: left unacknowledged, for its redelivery (drain) or
     * its partition's new owner. Not an outcome.
     */
    public static final class GivenUp extends RuntimeException {
        private static final long serialVersionUID = 1L;

        GivenUp(RecordCopy context, String why) {
            super(
                    "Record " + context.topic() + "-" + context.partition() + "@" + context.offset()
                            + " was waiting for its turn when " + why + "; it is left unacknowledged",
                    null,
                    false,
                    false);
        }
    }
}
