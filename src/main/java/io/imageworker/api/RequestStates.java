package io.imageworker.api;

import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ImageStarted;
import io.imageworker.contract.Lane;
import io.imageworker.gateway.GatewaySettings;
import io.imageworker.progress.RequestEvents;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Pauses;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
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
 * The status read model: the requests this worker holds now, and whether a gateway call of each has left; what {@code
 * GET /requests/{requestId}} answers for a request not recorded yet, and what the console shows of this replica's
 * queue. It is told nothing but the events of {@link RequestEvents} (queued in its producer's line, a call left, its
 * work ended, the partitions owned), by layers that know that interface and never this class, and reads the rest from
 * the registry of what is in progress ({@link RequestsInProgress}); nothing else writes it ({@code ArchitectureTest}).
 *
 * <p>A request is {@link State#QUEUED} while its work is under way and no call of it has left ({@link
 * RequestsInProgress#workOf}, begun and over as {@code processing.RequestProcessor} starts and ends its story), while
 * a record of it read ahead waits for its turn ({@link RequestsInProgress#waitingForTurn}, {@code
 * messaging.intake.ReadAhead}), and while it is among the requests this worker parked lately ({@link
 * RequestsInProgress#parkedLately}: fair shares at any backlog, it waits in the parked topic to be read back, here or
 * by another replica; once recorded, the status answers its record first). It is {@link State#CALLING} once a call of
 * it left (told to the registry by the gateway). So it holds at most the requests in progress, the read-ahead and the
 * last {@link RequestsInProgress#PARKED_KEPT} parked.
 *
 * <p>Where a queued request stands: its place in its producer's line ({@link ProducerLines}, from the time its record
 * is taken to its first call), and the rate at which calls left this replica lately ({@link CallRate}), which a status
 * query turns into an estimate. Where producers are taken from their topics, each producer's own pace too ({@link
 * ProducerPace}: how fast its lines were served, how long its calls took), what that producer's estimate rests on.
 *
 * <p>Each request is known by its name ({@link RequestsInProgress#name}): its {@code requestId}, or {@code
 * <producer>/<requestId>} where ids are unique within their producer ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}),
 * so that two producers' requests of one id are held apart and a status query of one producer never reads the other's.
 *
 * <p>It knows only this worker: a request held by another replica is not here. What it knows of the others is how many
 * of the request topics' partitions this replica owns ({@link #partitions}, told by the rebalance listener): a request
 * on a partition it does not own is held, if at all, by another replica.
 */
@ApplicationScoped
public class RequestStates implements RequestEvents {

    /** Where a request held by this worker is. */
    public enum State {
        /** Held, no gateway call of it has left yet (it is validated, planned, or waits for a slot or a guard). */
        QUEUED,
        /** A gateway call of it has left: a cancel no longer stops it (it may be retried, or its image stored). */
        CALLING
    }

    /**
     * What is in progress: the requests whose work is under way (with whether a call of each has left and when the
     * first did), read ahead or being parked, and those parked lately.
     */
    private final RequestsInProgress progress;
    /** The requests waiting for their first call, in their producers' lines. */
    private final ProducerLines lines = new ProducerLines();
    /** The calls that left lately. */
    private final CallRate rate;
    /** The partitions this replica owns of each request topic, and the topic's partitions: {owned, total}. */
    private final Map<String, int[]> partitions = new ConcurrentHashMap<>();

    /** Each producer's own pace, where producers are taken from their topics; null otherwise. */
    private final ProducerPace pace;

    /** The wall clock, epoch milliseconds: when calls leave and end. */
    private final LongSupplier clock;

    /**
     * States of a registry of their own, their call rate counted over {@link CallRate#LEAST_WINDOW}: a gateway of short
     * calls (for tests of the view alone).
     */
    public RequestStates() {
        this(CallRate.LEAST_WINDOW, new RequestsInProgress(new Pauses(System::nanoTime)));
    }

    /**
     * The worker's states, what is in progress read from {@code progress}: its call rate spans two of the longest
     * gateway calls ({@link CallRate#windowFor}).
     */
    @Inject
    public RequestStates(WorkerConfig config, GatewaySettings gateway, RequestsInProgress progress) {
        this(
                CallRate.windowFor(gateway.timeout()),
                config.producerIdentity() == WorkerConfig.ProducerIdentity.topic
                        ? Set.copyOf(config.producers().orElse(List.of()).stream()
                                .map(String::trim)
                                .toList())
                        : null,
                progress,
                System::currentTimeMillis);
    }

    /**
     * States whose call rate is counted over {@code rateWindow} ({@link CallRate#windowFor} the gateway's timeout),
     * what is in progress read from {@code progress}.
     */
    public RequestStates(Duration rateWindow, RequestsInProgress progress) {
        this(rateWindow, null, progress, System::currentTimeMillis);
    }

    /**
     * States whose call rate is counted over {@code rateWindow}, what is in progress read from {@code progress}, on
     * {@code clock} (epoch milliseconds; the registry's own, for tests); where producers are taken from their topics
     * ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}: {@code producers} not null, each request known by {@code
     * <producer>/<requestId>}), the own pace of each of {@code producers} kept ({@link #ownCallsPerSecond}, {@link
     * #ownCallMillis}), its rates over {@code rateWindow}.
     */
    public RequestStates(Duration rateWindow, Set<String> producers, RequestsInProgress progress, LongSupplier clock) {
        this.clock = clock;
        this.rate = new CallRate(rateWindow);
        this.pace = producers == null ? null : new ProducerPace(rateWindow, producers);
        this.progress = progress;
    }

    /**
     * A record of request {@code name} waits for its turn: it joins its producer's line, until its first call leaves,
     * its work ends, or the returned action runs.
     */
    @Override
    public Runnable queued(String name, Lane lane, String producer) {
        ProducerLines.Place place = lines.join(name, lane, producer);
        return () -> lines.leave(place);
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
    @Override
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

    /** {@link #sent(ImageStarted, String)} of a request known by its id. */
    @Override
    public void sent(ImageStarted call) {
        sent(call, call.requestId());
    }

    /**
     * Told by the gateway as each call leaves: counted in the rate, and its request, known as {@code storageId} (its
     * {@link RequestsInProgress#name}), waits in no line any more. (The registry hears it too: from now on its work is
     * calling.)
     */
    @Override
    public void sent(ImageStarted call, String storageId) {
        long now = clock.getAsLong();
        rate.started(now);
        ProducerLines.Place left = lines.leave(storageId);
        if (pace != null && left != null) {
            pace.served(left.lane(), left.producer(), now);
        }
    }

    /** The work of {@code name} ended, however it did: it waits in no line, and the length of its calls counts in the rate. */
    @Override
    public void ended(String name, Optional<RequestsInProgress.Work> work) {
        lines.leave(name);
        work.ifPresent(ended -> {
            long since = ended.callingSince();
            if (since >= 0) {
                long length = clock.getAsLong() - since;
                rate.finished(length);
                int slash = name.indexOf('/');
                if (pace != null && slash > 0) {
                    // Known as <producer>/<requestId> in this mode (RequestsInProgress.name).
                    pace.finished(name.substring(0, slash), length);
                }
            }
        });
    }

    /** Where {@code requestId} is, if this worker holds it (in progress, or read ahead and waiting for its turn). */
    public Optional<State> of(String requestId) {
        State state = progress.workOf(requestId)
                .map(work -> work.calling() ? State.CALLING : State.QUEUED)
                .orElse(null);
        if (state == null && (progress.waitingForTurn().contains(requestId) || progress.parkedLately(requestId))) {
            return Optional.of(State.QUEUED);
        }
        return Optional.ofNullable(state);
    }

    /** Whether {@code requestId} is among the requests parked here last. */
    public boolean parkedHere(String requestId) {
        return progress.parkedLately(requestId);
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
     * Up to {@code limit} of the requests in progress here whose call has left and whose name ({@link
     * RequestsInProgress#name}) {@code
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
