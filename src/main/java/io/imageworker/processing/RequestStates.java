package io.imageworker.processing;

import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.ImageStarted;
import io.imageworker.contract.Lane;
import io.imageworker.gateway.CallListener;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Pauses;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The requests this worker holds now, and whether a gateway call of each has left: what {@code GET
 * /requests/{requestId}} answers for a request not recorded yet. The request's work is begun in the registry of what
 * is in progress ({@link RequestsInProgress#begun}, by this class alone) when its story starts ({@link
 * RequestProcessor}), marked {@link State#CALLING} when one of its calls leaves (a {@link CallListener}), and over
 * when the work ends in any way (an event, a failure, an abandon at shutdown, a cancel of the subscription), after its
 * outcome is recorded. So it holds at most the requests in progress: bounded by the in-progress limit of each lane.
 * Records read ahead that wait for their turn ({@code messaging.intake.ReadAhead}) read {@link State#QUEUED} too, counted apart
 * ({@link #waiting}), bounded by the read-ahead.
 *
 * <p>Requests this worker parked (fair shares at any backlog, {@code messaging.parking.RequestParking}) read {@link
 * State#QUEUED} too, the last {@link #PARKED_KEPT} of them: they wait in the parked topic to be read back, here or by
 * another replica; once recorded, the status answers their record first.
 *
 * <p>Where a queued request stands: its place in its producer's line ({@link ProducerLines}, from the time its record
 * is taken to its first call), and the rate at which calls left this replica lately ({@link CallRate}), which a status
 * query turns into an estimate. Where producers are taken from their topics, each producer's own pace too ({@link
 * ProducerPace}: how fast its lines were served, how long its calls took), what that producer's estimate rests on.
 *
 * <p>Each request is known by its name ({@link #name}): its {@code requestId}, or {@code <producer>/<requestId>} where
 * ids are unique within their producer ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}), so that two producers' requests
 * of one id are held apart and a status query of one producer never reads the other's.
 *
 * <p>It knows only this worker: a request held by another replica is not here. What it knows of the others is how many
 * of the request topics' partitions this replica owns ({@link #partitions}, told by the rebalance listener): a request
 * on a partition it does not own is held, if at all, by another replica.
 */
@ApplicationScoped
public class RequestStates implements CallListener {

    /** Where a request held by this worker is. */
    public enum State {
        /** Held, no gateway call of it has left yet (it is validated, planned, or waits for a slot or a guard). */
        QUEUED,
        /** A gateway call of it has left: a cancel no longer stops it (it may be retried, or its image stored). */
        CALLING
    }

    /** How many of the requests parked last are remembered as {@link State#QUEUED}. */
    public static final int PARKED_KEPT = 10_000;

    /** The requests whose work is under way, each with whether a call of it has left and when the first did. */
    private final RequestsInProgress progress;
    /** The requests parked here last, oldest first. */
    private final Map<String, Boolean> parked = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > PARKED_KEPT;
        }
    };
    /** The requests waiting for their first call, in their producers' lines. */
    private final ProducerLines lines = new ProducerLines();
    /** The calls that left lately. */
    private final CallRate rate;
    /** The partitions this replica owns of each request topic, and the topic's partitions: {owned, total}. */
    private final Map<String, int[]> partitions = new ConcurrentHashMap<>();

    /** Whether requests are known by {@code <producer>/<requestId>} ({@link #name}). */
    private final boolean idsPerProducer;

    /** Each producer's own pace, where producers are taken from their topics; null otherwise. */
    private final ProducerPace pace;

    /** The wall clock, epoch milliseconds: when calls leave and end. */
    private final LongSupplier clock;

    /** States whose call rate is counted over {@link CallRate#LEAST_WINDOW}: a gateway of short calls. */
    public RequestStates() {
        this(CallRate.LEAST_WINDOW);
    }

    /**
     * The worker's states, the work of its requests held in {@code progress}: its call rate spans two of the longest
     * gateway calls ({@link CallRate#windowFor}).
     */
    @Inject
    public RequestStates(WorkerConfig config, RequestsInProgress progress) {
        this(
                CallRate.windowFor(config.gateway().timeout()),
                config.producerIdentity() == WorkerConfig.ProducerIdentity.topic,
                config.producerIdentity() == WorkerConfig.ProducerIdentity.topic
                        ? Set.copyOf(config.producers().orElse(List.of()).stream()
                                .map(String::trim)
                                .toList())
                        : Set.of(),
                progress,
                System::currentTimeMillis);
    }

    /** States whose call rate is counted over {@code rateWindow} ({@link CallRate#windowFor} the gateway's timeout). */
    public RequestStates(Duration rateWindow) {
        this(rateWindow, false);
    }

    /**
     * States whose call rate is counted over {@code rateWindow}, knowing each request by {@code <producer>/<requestId>}
     * when {@code idsPerProducer}.
     */
    public RequestStates(Duration rateWindow, boolean idsPerProducer) {
        this(
                rateWindow,
                idsPerProducer,
                Set.of(),
                new RequestsInProgress(new Pauses(System::nanoTime)),
                System::currentTimeMillis);
    }

    /**
     * States of producers taken from their topics ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}) on {@code clock}
     * (epoch milliseconds), for tests: each request known by {@code <producer>/<requestId>}, and the own pace of each
     * of {@code producers} kept ({@link #ownCallsPerSecond}, {@link #ownCallMillis}), its rates over {@code
     * rateWindow}.
     */
    public RequestStates(Duration rateWindow, Set<String> producers, LongSupplier clock) {
        this(rateWindow, true, producers, new RequestsInProgress(new Pauses(System::nanoTime)), clock);
    }

    /**
     * States whose call rate is counted over {@code rateWindow}, the work of their requests held in {@code progress},
     * on {@code clock}; each request known by {@code <producer>/<requestId>} and the own pace of each of {@code
     * producers} kept when {@code idsPerProducer} (none otherwise).
     */
    private RequestStates(
            Duration rateWindow,
            boolean idsPerProducer,
            Set<String> producers,
            RequestsInProgress progress,
            LongSupplier clock) {
        this.clock = clock;
        this.rate = new CallRate(rateWindow);
        this.idsPerProducer = idsPerProducer;
        this.pace = idsPerProducer ? new ProducerPace(rateWindow, producers) : null;
        this.progress = progress;
    }

    /**
     * The name the request {@code requestId} of {@code producer} is known by here: {@code <producer>/<requestId>} where
     * ids are unique within their producer, else its id.
     */
    public String name(String producer, String requestId) {
        return idsPerProducer && producer != null ? ImageRequest.scopedId(producer, requestId) : requestId;
    }

    /**
     * A record of {@code requestId} was taken and waits for its turn to go into progress (read ahead): it reads {@link
     * State#QUEUED} until its turn comes ({@link #admitted}). Bounded by the read-ahead.
     */
    public void waiting(String requestId) {
        progress.readAhead(requestId);
    }

    /**
     * The record of {@code requestId} of {@code producer}, taken from {@code lane}, joins its producer's line: it
     * stands there until its first call leaves or {@link #outOfLine} (its work ended, however).
     */
    public ProducerLines.Place inLine(String requestId, Lane lane, String producer) {
        return lines.join(requestId, lane, producer);
    }

    /** {@code place} leaves its line, if it still stands in it. */
    public void outOfLine(ProducerLines.Place place) {
        lines.leave(place);
    }

    /** Where {@code requestId} stands in its producer's line; empty when it waits in none here. */
    public Optional<ProducerLines.Standing> standing(String requestId) {
        return lines.standing(requestId);
    }

    /** Calls per second that left this replica over its rate's window; empty: none left, or none finished yet. */
    public OptionalDouble callsPerSecond() {
        return rate.perSecond(clock.getAsLong());
    }

    /**
     * Where producers are taken from their topics: {@code producer}'s requests that left its line in {@code lane} by
     * their first call here, per second over the rate's window; empty when none did, none of its calls finished yet,
     * or producers are declared (nothing is kept per producer then).
     */
    public OptionalDouble ownCallsPerSecond(Lane lane, String producer) {
        return pace == null ? OptionalDouble.empty() : pace.perSecond(lane, producer, clock.getAsLong());
    }

    /**
     * Where producers are taken from their topics: the mean length of {@code producer}'s last requests' calls here
     * (from the first call to the end of the request's work); empty when none finished, or producers are declared.
     */
    public OptionalLong ownCallMillis(String producer) {
        return pace == null ? OptionalLong.empty() : pace.callMillis(producer);
    }

    /**
     * This replica owns {@code owned} of the {@code total} partitions of request topic {@code topic} (a total below 0:
     * not known); told after each rebalance.
     */
    public void partitions(String topic, int owned, int total) {
        partitions.put(topic, new int[] {owned, total});
    }

    /**
     * The partitions this replica owns of the request topics it reads, and how many they have: empty before its first
     * assignment; a total of -1 when one topic's count is not known.
     */
    public Optional<Owned> owned() {
        if (partitions.isEmpty()) {
            return Optional.empty();
        }
        int owned = 0;
        int total = 0;
        for (int[] topic : partitions.values()) {
            owned += topic[0];
            total = total < 0 || topic[1] < 0 ? -1 : total + topic[1];
        }
        return Optional.of(new Owned(owned, total));
    }

    /** Partitions of the request topics: {@code owned} by this replica of {@code total} (-1: not known). */
    public record Owned(int owned, int total) {}

    /**
     * {@code requestId} was parked: it reads {@link State#QUEUED} while it is among the last parked here, counted from
     * its last park (a copy parked again is remembered as long as the parked topic's partitions remember it, {@code
     * messaging.parking.ParkedPartitions}).
     */
    public void parked(String requestId) {
        synchronized (parked) {
            parked.remove(requestId);
            parked.put(requestId, Boolean.TRUE);
        }
    }

    /**
     * A record of {@code requestId} is being parked, its transaction not committed yet ({@link
     * RequestsInProgress#parkUnderWay}), until {@link #parkOver}.
     */
    public void parkUnderWay(String requestId) {
        progress.parkUnderWay(requestId);
    }

    /** The park of a record of {@code requestId} that was {@link #parkUnderWay} is over, however it ended. */
    public void parkOver(String requestId) {
        progress.parkOver(requestId);
    }

    /** Whether a record of {@code requestId} is being parked here now. */
    public boolean parking(String requestId) {
        return progress.parking(requestId);
    }

    /** A record of {@code requestId} that was {@link #waiting} had its turn, or ended without it. */
    public void admitted(String requestId) {
        progress.turnCame(requestId);
    }

    /** The work of {@code requestId} begins ({@link RequestsInProgress#begun}): it is {@link State#QUEUED}. */
    public void held(String requestId) {
        progress.begun(requestId);
    }

    /** A gateway call of {@code requestId} left; nothing when the request is not held. Returns at once. */
    void calling(String requestId) {
        progress.workOf(requestId).ifPresent(RequestsInProgress.Work::called);
    }

    /** {@link #sent(ImageStarted, String)} of a request known by its id. */
    @Override
    public void sent(ImageStarted call) {
        sent(call, call.requestId());
    }

    /**
     * Told by the gateway as each call leaves: counted in the rate, and its request, known as {@code storageId} (its
     * {@link #name}), waits in no line any more.
     */
    @Override
    public void sent(ImageStarted call, String storageId) {
        long now = clock.getAsLong();
        rate.started(now);
        progress.workOf(storageId).ifPresent(work -> work.callingSince(now));
        ProducerLines.Place left = lines.leave(storageId);
        if (pace != null && left != null) {
            pace.served(left.lane(), left.producer(), now);
        }
        calling(storageId);
    }

    /**
     * The work of {@code requestId} ended, however it did ({@link RequestsInProgress#over}): the length of its calls
     * counts in the rate.
     */
    public void ended(String requestId) {
        lines.leave(requestId);
        progress.over(requestId).ifPresent(work -> {
            long since = work.callingSince();
            if (since >= 0) {
                long length = clock.getAsLong() - since;
                rate.finished(length);
                int slash = requestId.indexOf('/');
                if (pace != null && slash > 0) {
                    // Known as <producer>/<requestId> in this mode (name).
                    pace.finished(requestId.substring(0, slash), length);
                }
            }
        });
    }

    /** Where {@code requestId} is, if this worker holds it (in progress, or read ahead and waiting for its turn). */
    public Optional<State> of(String requestId) {
        State state = progress.workOf(requestId)
                .map(work -> work.calling() ? State.CALLING : State.QUEUED)
                .orElse(null);
        if (state == null && (progress.waitingForTurn().contains(requestId) || wasParked(requestId))) {
            return Optional.of(State.QUEUED);
        }
        return Optional.ofNullable(state);
    }

    /** Whether {@code requestId} is among the requests parked here last. */
    public boolean parkedHere(String requestId) {
        return wasParked(requestId);
    }

    private boolean wasParked(String requestId) {
        synchronized (parked) {
            return parked.containsKey(requestId);
        }
    }

    /** The lines of the producers waiting here: lane, producer, requests waiting (for the console). */
    public List<ProducerLines.LineCount> lines() {
        return lines.counts();
    }

    /** The requests in the first {@code perLine} places of each line, with their positions (for the console). */
    public List<ProducerLines.Queued> firstInLines(int perLine) {
        return lines.firstOfEachLine(perLine);
    }

    /** Up to {@code limit} of the requests in progress here whose call has left (for the console). */
    public List<String> calling(int limit) {
        return progress.calling(limit);
    }

    /**
     * Up to {@code limit} of the requests in progress here whose call has left and whose name ({@link #name}) {@code
     * which} takes (for the console's view of one producer).
     */
    public List<String> calling(int limit, Predicate<String> which) {
        return progress.calling(limit, which);
    }

    /** Records read ahead here that wait for their turn to go into progress. */
    public int waitingCount() {
        return progress.waitingForTurn().size();
    }

    /** How many requests this worker holds. */
    public int size() {
        return progress.working();
    }
}
