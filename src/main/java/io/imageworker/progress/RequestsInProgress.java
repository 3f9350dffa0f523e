package io.imageworker.progress;

import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.ImageStarted;
import io.imageworker.gateway.CallListener;
import io.imageworker.support.Pauses;
import io.imageworker.turns.FairTurns;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;

/**
 * The one registry of the requests in progress on this worker: every record taken from the request topics to run
 * ({@link Taken}), by partition, from its start ({@link #started}, told by {@code messaging.offsets.InFlight} as it
 * takes the record) to its end ({@link #ended}, told by the record's run when the result sink ends it, and by nothing
 * else); the records of each request waiting for their turn (read ahead) or being parked, the requests parked here
 * lately, the request's place in progress once its turn came ({@link Place}) and its work under way ({@link Work}),
 * each by the request's name ({@link #name}). Each kind is told by one class: a request's work by {@code
 * processing.RequestProcessor} as its story begins and ends, its records' wait for their turn by {@code
 * messaging.intake.ReadAhead}, their parks by {@code messaging.parking.Parking}, and each call of it that leaves by
 * the gateway, to which this registry is a {@link CallListener}.
 *
 * <p>What is read from it: how many requests are in progress (the gauge {@code image_worker_requests_in_progress}, the
 * graceful drain's wait, {@link #count}, {@link #awaitNoneUnderWay}); how long each has been worked on, not counting the
 * worker's pauses nor its wait for its turn (the commit strategy's "stuck record", {@link #anyWorkedLongerThan}); which
 * of a partition's records still stand in their producer's line when a rebalance takes it away ({@link #leaveLines});
 * where a request steps aside for its producer's cap ({@link #place}); which requests a status query finds held here,
 * read ahead, under way or parked lately, and whether a call of each has left (the status read model, {@code
 * api.RequestStates}, which hears the rest of a request's course through {@link RequestEvents}); whether a copy of a
 * request is parked after it ({@code messaging.parking.Parking}); which request's work a cancel stops ({@link Work#cancelled}, {@code processing.Cancellations}). The offsets' own facts of each partition
 * (which offsets may be committed, those acknowledged above them) stay with {@code messaging.offsets.PartitionWork},
 * which changes them under its one lock; the de-duplication of the copies of one request stays with {@code
 * processing.RequestProcessor}.
 */
@ApplicationScoped
public class RequestsInProgress implements CallListener {

    /** How many of the requests parked last are remembered ({@link #parkedLately}). */
    public static final int PARKED_KEPT = 10_000;

    /** The records in progress, by partition. */
    private final Map<TopicPartition, Set<Taken>> byPartition = new ConcurrentHashMap<>();
    /** The place in progress of each request whose turn came, by its name (the first copy's). */
    private final Map<String, Place> places = new ConcurrentHashMap<>();
    /**
     * The work of each request under way, by its name, from its start to its end ({@code processing.RequestProcessor}
     * shares one among the copies of a request that run at once, so there is one per name at a time).
     */
    private final Map<String, Work> works = new ConcurrentHashMap<>();
    /** The records of each request read ahead and waiting for their turn, by the request's name. */
    private final Map<String, Integer> waitingForTurn = new ConcurrentHashMap<>();
    /** The records of each request whose park is under way (its transaction not committed yet), by the request's name. */
    private final Map<String, Integer> parking = new ConcurrentHashMap<>();
    /** The requests parked here last, oldest first, by their names. Guarded by itself. */
    private final Map<String, Boolean> parked = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > PARKED_KEPT;
        }
    };

    private final AtomicInteger count = new AtomicInteger();
    /** Records waiting for their turn now. */
    private final AtomicInteger waiting = new AtomicInteger();

    private final Pauses pauses;
    /** Whether requests are known by {@code <producer>/<requestId>} ({@link #name}). */
    private final boolean idsPerProducer;
    /** The wall clock, epoch milliseconds: when a request's first call left ({@link Work#callingSince()}). */
    private final LongSupplier clock;

    private volatile boolean everWaited;
    /** When (on the pause clock) the last record stopped waiting for its turn. */
    private volatile long lastWaitEnded;

    /**
     * The worker's: its requests known by {@code <producer>/<requestId>} where ids are unique within their producer
     * ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}).
     */
    @Inject
    public RequestsInProgress(Pauses pauses, WorkerConfig config) {
        this(pauses, config.producerIdentity() == WorkerConfig.ProducerIdentity.topic);
    }

    /** The requests in progress, each one's time counted on {@code pauses}' clock, its pauses not counted. */
    public RequestsInProgress(Pauses pauses) {
        this(pauses, false);
    }

    /** The same, each request known by {@code <producer>/<requestId>} when {@code idsPerProducer}. */
    public RequestsInProgress(Pauses pauses, boolean idsPerProducer) {
        this(pauses, idsPerProducer, System::currentTimeMillis);
    }

    /** The same, its calls' times read on {@code clock} (epoch milliseconds; the status read model's, for tests). */
    public RequestsInProgress(Pauses pauses, boolean idsPerProducer, LongSupplier clock) {
        this.pauses = pauses;
        this.idsPerProducer = idsPerProducer;
        this.clock = clock;
    }

    /**
     * The name the request {@code requestId} of {@code producer} is known by here: {@code <producer>/<requestId>} where
     * ids are unique within their producer, else its id; so two producers' requests of one id are held apart.
     */
    public String name(String producer, String requestId) {
        return idsPerProducer && producer != null ? ImageRequest.scopedId(producer, requestId) : requestId;
    }

    /** A record taken runs: it is in progress until {@link #ended}. Told once, by the offsets as they take it. */
    public void started(Taken taken) {
        taken.countFrom(pauses.now(), pauses.pausedNanos());
        byPartition.compute(taken.partition(), (partition, taken0) -> {
            Set<Taken> records = taken0 == null ? ConcurrentHashMap.newKeySet() : taken0;
            records.add(taken);
            return records;
        });
        count.incrementAndGet();
    }

    /**
     * A record {@link #started} is in progress no more (acknowledged, failed, given up or cancelled): told once, by its
     * run as the result sink ends it.
     */
    public void ended(Taken taken) {
        admitted(taken);
        byPartition.computeIfPresent(taken.partition(), (partition, records) -> {
            records.remove(taken);
            return records.isEmpty() ? null : records;
        });
        count.decrementAndGet();
        notifyIfNoneUnderWay();
    }

    /** Requests in progress now: started and not yet ended. */
    public int count() {
        return count.get();
    }

    /**
     * Waits until no record is under way (in progress and not waiting for its turn) or {@code deadline} (on {@link
     * System#nanoTime}) is past; only a thread that may block calls it (the shutdown's), never an event loop. A record
     * still waiting for its turn is not waited for: the drain lets no gateway call start, so its turn would bring it no
     * call, only its end unacknowledged, and waiting for it would make every stop with a read-ahead last the whole
     * grace.
     *
     * @return the records still in progress, those waiting for their turn included
     */
    public int awaitNoneUnderWay(long deadline) {
        synchronized (count) {
            long remaining;
            while (underWay() > 0 && (remaining = deadline - System.nanoTime()) > 0) {
                try {
                    // An end or a record going back to wait that leaves none under way notifies.
                    count.wait(Math.max(1, remaining / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return count.get();
    }

    /**
     * Records in progress whose turn came: started, not ended and not waiting for their turn. Each counter changes
     * alone, in an order that never shows fewer than there are: a start counts before its wait, an end after its
     * admission.
     */
    private int underWay() {
        return count.get() - waiting.get();
    }

    /** Wakes the drain's wait when no record is under way. */
    private void notifyIfNoneUnderWay() {
        if (underWay() <= 0) {
            synchronized (count) {
                count.notifyAll();
            }
        }
    }

    /**
     * {@code taken} waits for its turn to go into progress: until {@link #admitted}, its time is not counted, however
     * long.
     */
    public void waiting(Taken taken) {
        if (taken.waits.compareAndSet(false, true)) {
            waiting.incrementAndGet();
            notifyIfNoneUnderWay();
        }
    }

    /** {@code taken}'s turn came (or it ended waiting): its time counts from now. Later calls do nothing. */
    public void admitted(Taken taken) {
        if (taken.waits.compareAndSet(true, false)) {
            long now = pauses.now();
            taken.countFrom(now, pauses.pausedNanos());
            lastWaitEnded = now;
            everWaited = true;
            waiting.decrementAndGet();
        }
    }

    /**
     * Whether a record in progress, not waiting for its turn, has been worked on longer than {@code maxAge}, not
     * counting the worker's pauses it went through.
     */
    public boolean anyWorkedLongerThan(Duration maxAge) {
        long now = pauses.now();
        long paused = pauses.pausedNanos();
        long max = maxAge.toNanos();
        for (Set<Taken> records : byPartition.values()) {
            for (Taken taken : records) {
                if (!taken.waits.get() && taken.workedNanos(now, paused) > max) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether a record waits for its turn now, or stopped waiting within {@code maxAge}. */
    public boolean waitedWithin(Duration maxAge) {
        return waiting.get() > 0 || everWaited && pauses.now() - lastWaitEnded < maxAge.toNanos();
    }

    /**
     * {@code taken} stands in its producer's line while it waits for its turn: {@code outOfLine} takes it out, at once
     * if its partition is taken away meanwhile ({@link #leaveLines}), unless {@link #outOfLine} came first.
     */
    public void inLine(Taken taken, Runnable outOfLine) {
        taken.inLine.set(outOfLine);
    }

    /** {@code taken} stands in its line no more as far as a rebalance is concerned (its turn came, or it ended). */
    public void outOfLine(Taken taken) {
        taken.inLine.set(null);
    }

    /** The records of {@code partitions} standing in their producers' lines leave them now (a rebalance took them). */
    public void leaveLines(Collection<TopicPartition> partitions) {
        for (TopicPartition partition : partitions) {
            Set<Taken> records = byPartition.get(partition);
            if (records != null) {
                records.forEach(taken -> {
                    Runnable leave = taken.inLine.getAndSet(null);
                    if (leave != null) {
                        leave.run();
                    }
                });
            }
        }
    }

    /**
     * The request {@code name}, its record {@code run}, went into progress in {@code turn}: its place, or the place a
     * copy of it already holds, which this copy's run joins. Whether the request may call is asked of every copy's run
     * that holds the place ({@link Place#waitsToCall}): a copy left by a rebalance (its partition released, its run
     * given up) does not hand over the copy read again in the new assignment. This copy's run leaves the place by
     * {@link #unplace}.
     */
    public Place place(String name, FairTurns.Turn turn, Taken run) {
        return places.compute(name, (ignored, held) -> {
            Place place = held == null ? new Place() : held;
            place.copies.add(new Copy(run, turn));
            return place;
        });
    }

    /** The place of request {@code name} in progress here, if it holds one. */
    public Optional<Place> placeOf(String name) {
        return Optional.ofNullable(places.get(name));
    }

    /** The copy of request {@code name} whose record {@code run} holds {@code place} ended: the place is given back once no copy holds it. */
    public void unplace(String name, Place place, Taken run) {
        places.computeIfPresent(name, (ignored, held) -> {
            if (held != place) {
                return held;
            }
            held.copies.removeIf(copy -> copy.run() == run);
            return held.copies.isEmpty() ? null : held;
        });
    }

    /** Each place whose request waits aside now, with the signal that cuts its wait short. */
    public void forEachAside(Consumer<Place> action) {
        places.values().forEach(place -> {
            if (place.aside.get() != null) {
                action.accept(place);
            }
        });
    }

    /**
     * A record of request {@code name} was taken and waits for its turn to go into progress (read ahead), until {@link
     * #turnCame}: told by the read-ahead ({@code messaging.intake.ReadAhead}).
     */
    public void readAhead(String name) {
        waitingForTurn.merge(name, 1, Integer::sum);
    }

    /** A record of request {@code name} that was {@link #readAhead} had its turn, or ended without it. */
    public void turnCame(String name) {
        waitingForTurn.computeIfPresent(name, (id, records) -> records > 1 ? records - 1 : null);
    }

    /** The names of the requests with a record read ahead and waiting for its turn now ({@link #readAhead}). */
    public Set<String> waitingForTurn() {
        return Collections.unmodifiableSet(waitingForTurn.keySet());
    }

    /**
     * A record of request {@code name} is being parked (copied to the parked topic in the transaction of its offset),
     * until {@link #parkOver}: told by the parking's decision ({@code messaging.parking.Parking}).
     */
    public void parkUnderWay(String name) {
        parking.merge(name, 1, Integer::sum);
    }

    /** The park of a record of request {@code name} that was {@link #parkUnderWay} is over, however it ended. */
    public void parkOver(String name) {
        parking.computeIfPresent(name, (id, parks) -> parks > 1 ? parks - 1 : null);
    }

    /** Whether a record of request {@code name} is being parked now ({@link #parkUnderWay}). */
    public boolean parking(String name) {
        return parking.containsKey(name);
    }

    /**
     * Request {@code name} was parked (its copy and its offset committed): it is among those parked here lately, the
     * last {@link #PARKED_KEPT}, counted from its last park. Told by the parking's decision ({@code
     * messaging.parking.Parking}).
     */
    public void parked(String name) {
        synchronized (parked) {
            parked.remove(name);
            parked.put(name, Boolean.TRUE);
        }
    }

    /** Whether request {@code name} is among the last {@link #PARKED_KEPT} parked here ({@link #parked}). */
    public boolean parkedLately(String name) {
        synchronized (parked) {
            return parked.containsKey(name);
        }
    }

    /**
     * The work of request {@code name} begins (it is validated, planned, its calls made): under way until {@link
     * #over}. Told by {@code processing.RequestProcessor} as the request's story starts.
     */
    public Work begun(String name) {
        Work work = new Work();
        works.put(name, work);
        return work;
    }

    /**
     * The work of request {@code name} ended, however it did: what it was, if it was under way. Told by {@code
     * processing.RequestProcessor}.
     */
    public Optional<Work> over(String name) {
        return Optional.ofNullable(works.remove(name));
    }

    /** The work of request {@code name}, if it is under way here. */
    public Optional<Work> workOf(String name) {
        return Optional.ofNullable(works.get(name));
    }

    /** {@link #sent(ImageStarted, String)} of a request known by its id. */
    @Override
    public void sent(ImageStarted call) {
        sent(call, call.requestId());
    }

    /**
     * Told by the gateway as each call leaves: the work of its request, known as {@code storageId} (its {@link #name}),
     * is calling from now on (since now, unless an earlier call was told); nothing when it is not under way.
     */
    @Override
    public void sent(ImageStarted call, String storageId) {
        Work work = works.get(storageId);
        if (work != null) {
            work.callingSince(clock.getAsLong());
            work.called();
        }
    }

    /** How many requests' work is under way. */
    public int working() {
        return works.size();
    }

    /** Up to {@code limit} of the requests under way whose gateway call has left. */
    public List<String> calling(int limit) {
        return calling(limit, name -> true);
    }

    /** Up to {@code limit} of the requests under way whose call has left and whose name {@code which} takes. */
    public List<String> calling(int limit, Predicate<String> which) {
        List<String> calling = new ArrayList<>();
        for (Map.Entry<String, Work> entry : works.entrySet()) {
            if (calling.size() >= limit) {
                break;
            }
            if (entry.getValue().calling && which.test(entry.getKey())) {
                calling.add(entry.getKey());
            }
        }
        return calling;
    }

    /**
     * A record taken from a request topic to run, as this registry knows it: its partition, how long it has been worked
     * on, whether it stands in its producer's line. What the offsets say of it (whether it may go on, whether its call
     * may leave) its run answers ({@code messaging.offsets.InFlight.Run}).
     */
    public abstract static class Taken {
        private final TopicPartition partition;
        private final AtomicBoolean waits = new AtomicBoolean();
        private final AtomicReference<Runnable> inLine = new AtomicReference<>();
        private volatile long countedFrom;
        private volatile long pausedAtCount;

        protected Taken(String topic, int partition) {
            this.partition = new TopicPartition(topic, partition);
        }

        /** Its record's partition. */
        public final TopicPartition partition() {
            return partition;
        }

        private void countFrom(long now, long paused) {
            countedFrom = now;
            pausedAtCount = paused;
        }

        private long workedNanos(long now, long paused) {
            return (now - countedFrom) - (paused - pausedAtCount);
        }

        /** It waits again as one read ahead: a revocation does not wait for it, and its wait is not counted. */
        public abstract void waiting();

        /** Its wait ({@link #waiting}) is over. */
        public abstract void admitted();

        /** Whether it may still go on here (the worker does not drain, its partition is still this worker's). */
        public abstract boolean mayGoOn();

        /** It waits for a chance to make a gateway call: whether it may still make one here. */
        public abstract boolean waitsToCall();

        /** A gateway call of it is about to leave: whether it may. */
        public abstract boolean callLeaves();
    }

    /** A copy of a request holding its place: its record's run and the turn it went into progress in. */
    private record Copy(Taken run, FairTurns.Turn turn) {}

    /**
     * A request's place in progress: the runs of the records of the copies of it that hold it, each with its turn; and while it waits aside for its producer's cap, the signal that ends its wait when it may not go on.
     * Copies of one request share its work ({@code processing.RequestProcessor}), so what the work may do is asked of
     * each of their runs: one whose partition is still this worker's answers for the request.
     */
    public static final class Place {
        /** The copies that hold it, in the order they came. Changed only under the registry's map's lock. */
        private final List<Copy> copies = new CopyOnWriteArrayList<>();

        private final AtomicReference<CompletableFuture<Void>> aside = new AtomicReference<>();

        private Place() {}

        /**
         * The turn it holds: that of the first copy still holding it (a copy that left gave its turn back with it);
         * null once no copy holds it.
         */
        public FairTurns.Turn turn() {
            return copies.stream().findFirst().map(Copy::turn).orElse(null);
        }

        /**
         * The run that acts for the request now: the first of its copies' that may still go on here, else the first;
         * null once no copy holds it (it was given back meanwhile).
         */
        public Taken run() {
            for (Copy copy : copies) {
                if (copy.run().mayGoOn()) {
                    return copy.run();
                }
            }
            return copies.stream().findFirst().map(Copy::run).orElse(null);
        }

        /** Whether the request may still go on here: a copy of it may. */
        public boolean mayGoOn() {
            return copies.stream().anyMatch(copy -> copy.run().mayGoOn());
        }

        /**
         * The request waits for a chance to make a gateway call: whether it may still make one here, asked of its
         * copies' runs in turn until one says yes (that one's partition then answers for the call).
         */
        public boolean waitsToCall() {
            return copies.stream().anyMatch(copy -> copy.run().waitsToCall());
        }

        /**
         * A gateway call of the request is about to leave: whether it may, asked of its copies' runs in turn until
         * one says yes (a revocation of that one's partition then waits for the call).
         */
        public boolean callLeaves() {
            return copies.stream().anyMatch(copy -> copy.run().callLeaves());
        }

        /** It waits aside now; {@code gone} ends the wait. */
        public void aside(CompletableFuture<Void> gone) {
            aside.set(gone);
        }

        /** It waits aside no more. */
        public void back() {
            aside.set(null);
        }

        /** Ends its wait aside, if it waits so. */
        public void endAside() {
            CompletableFuture<Void> gone = aside.get();
            if (gone != null) {
                gone.complete(null);
            }
        }
    }

    /**
     * One request's work under way: whether a gateway call of it has left (and when the first did), and what stops it
     * when a cancel comes before its first call (its cancellation ticket, {@code processing.Cancellations}).
     */
    public static final class Work {
        private volatile boolean calling;
        private final AtomicLong callingSince = new AtomicLong(-1);
        private final AtomicReference<Runnable> stop = new AtomicReference<>();

        private Work() {}

        /** Whether a gateway call of it has left. */
        public boolean calling() {
            return calling;
        }

        /** A gateway call of it left (told by the gateway to the registry alone). */
        private void called() {
            calling = true;
        }

        /** Its first call left at {@code millis} (epoch), unless an earlier one was told. */
        private void callingSince(long millis) {
            callingSince.compareAndSet(-1, millis);
        }

        /** When its first call left (epoch millis), or -1. */
        public long callingSince() {
            return callingSince.get();
        }

        /** A cancel of it runs {@code stop} from now on, until {@link #notStoppable}. */
        public void stoppable(Runnable stop) {
            this.stop.set(stop);
        }

        /** {@code stop} (told to {@link #stoppable}) no longer runs on a cancel. */
        public void notStoppable(Runnable stop) {
            this.stop.compareAndSet(stop, null);
        }

        /** A cancel of it came: what stops it, if anything does now. */
        public void cancelled() {
            Runnable now = stop.get();
            if (now != null) {
                now.run();
            }
        }
    }
}
