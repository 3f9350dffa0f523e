package io.imageworker.turns;

import io.imageworker.config.ProducerWeights;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.Lane;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A number of places shared fairly among producers within each {@link Lane}: the one queue of turns that the gateway's
 * calls ({@code gateway.ConcurrencyLimiter}, whose adaptive limit moves the number) and the read-ahead's places in
 * progress ({@code messaging.intake.ReadAhead}, a fixed number) both wait in. Waiting holds no thread: a caller's
 * {@code Uni} completes when a place frees up for it.
 *
 * <p>A free place goes to a waiting priority claim first, except that while claims of both lanes wait, the normal
 * lane gets at least {@code minShare} of the places handed out (a credit of {@code minShare} per place given while both
 * wait; a whole credit buys the normal lane the next one), so it never starves behind a busy priority lane.
 *
 * <p>Within a lane, places go round-robin among the producers with waiting claims (contract v1.2), weighted by
 * {@link ProducerWeights} (smooth weighted round-robin, {@link LaneQueue}: with {@code catalogue=1,edits=4} edits gets
 * 4 places for each one of catalogue's while both wait, spread out, and a producer alone gets every one). A producer's
 * claims are served first come first served.
 *
 * <p>A producer may be held ({@link #holdWhile}: the read-ahead holds a producer over its own spend cap): its claims
 * get no place while it is, and the others' go on; {@link #recheck()} hands out the places free once it is not. A run
 * may also give its place back for a while and take it again in its producer's turn ({@link Turn#aside}).
 */
public final class FairTurns {

    private final double minShare;
    private final LaneQueue normal;
    private final LaneQueue priority;
    /** Whether a producer's claims get no place now; read under the lock (must not call back into the turns). */
    private volatile Predicate<String> held = producer -> false;

    private double normalCredit;
    private int limit;
    private int inFlight;

    /**
     * {@code places} places to start with, the normal lane keeping {@code minShare} of them while both lanes wait, each
     * lane's shared among producers by {@code weights}.
     */
    public FairTurns(int places, double minShare, ProducerWeights weights) {
        if (places < 1) {
            throw new IllegalArgumentException("need at least one place, got " + places);
        }
        if (!(minShare >= 0 && minShare <= 1)) {
            throw new IllegalArgumentException("the normal lane's least share must be from 0 to 1, got " + minShare);
        }
        this.minShare = minShare;
        this.normal = new LaneQueue(weights);
        this.priority = new LaneQueue(weights);
        this.limit = places;
    }

    /**
     * Runs {@code work} of {@code producer} once a place is free for it (its lane's turn, then its producer's), and
     * frees the place when it ends, however it ends: also when the caller cancels (a cancel, the drain) while it
     * waits, as the place is given, or before the work starts, which would otherwise leave the place with no one.
     */
    public <T> Uni<T> run(Lane lane, String producer, Supplier<Uni<T>> work) {
        Claim claim = new Claim(producer == null ? ImageRequest.DEFAULT_PRODUCER : producer);
        return acquire(lane, claim)
                .onItem()
                .transformToUni(ignored -> claim.start()
                        ? Uni.createFrom().deferred(work::get)
                        // Cancelled as its place was given: nobody waits for this, and the place went back.
                        : Uni.createFrom().<T>nothing())
                .onTermination()
                .invoke(() -> {
                    if (claim.end()) {
                        release();
                    }
                });
    }

    /**
     * {@link #run(Lane, String, Supplier)} whose work is given its {@link Turn}, through which it can give its place
     * back while it waits for something and take it again afterwards.
     */
    public <T> Uni<T> run(Lane lane, String producer, Function<Turn, Uni<T>> work) {
        Turn turn = new Turn(lane, producer == null ? ImageRequest.DEFAULT_PRODUCER : producer);
        return acquire(lane, turn.claim)
                .onItem()
                .transformToUni(ignored -> turn.claim.start()
                        ? Uni.createFrom().deferred(() -> work.apply(turn))
                        : Uni.createFrom().<T>nothing())
                .onTermination()
                .invoke(turn::end);
    }

    /**
     * Holds the claims of each producer for which {@code producerHeld} is true: they get no place until it is false
     * and a place is free or {@link #recheck()} is called.
     */
    public void holdWhile(Predicate<String> producerHeld) {
        this.held = producerHeld;
    }

    /** Gives the free places to claims not held (a producer held before may be no more). */
    public void recheck() {
        while (true) {
            Claim next;
            synchronized (this) {
                next = inFlight < limit ? nextClaim() : null;
                if (next == null) {
                    return;
                }
                inFlight++;
            }
            next.given();
        }
    }

    /**
     * Sets the number of places to {@code change} of the number now, {@code change} run under the turns' lock (so that
     * the changes of several threads apply one after another and it may keep state of its own there; it must not call
     * back into the turns). A place that a greater number frees goes to the next claim in turn; a smaller number takes
     * none back: the runs above it end first.
     */
    public void changePlaces(IntUnaryOperator change) {
        List<Claim> given = new ArrayList<>();
        synchronized (this) {
            int before = limit;
            limit = change.applyAsInt(limit);
            for (int more = limit - before; more > 0 && inFlight < limit; more--) {
                Claim next = nextClaim();
                if (next == null) {
                    break;
                }
                inFlight++;
                given.add(next);
            }
        }
        given.forEach(Claim::given);
    }

    /** One run's hold on its place, which it can give back for a while ({@link #aside}). */
    public final class Turn {
        private final Lane lane;
        private final String producer;
        /** The claim that holds (or waits for) the run's place now; guarded by the turns' lock when replaced. */
        private volatile Claim claim;

        private Turn(Lane lane, String producer) {
            this.lane = lane;
            this.producer = producer;
            this.claim = new Claim(producer);
        }

        /**
         * {@code wait} without the place: given back at once (to the next claim in turn), taken again once {@code
         * wait} has its item, in the producer's turn (which comes only while the producer is not held). A failure of
         * {@code wait} is passed on without the place (the run ends).
         */
        public <X> Uni<X> aside(Uni<X> wait) {
            Claim given = claim;
            if (given.end()) {
                release();
            }
            return wait.chain(item -> {
                Claim again = new Claim(producer, true);
                synchronized (FairTurns.this) {
                    claim = again;
                }
                return acquire(lane, again)
                        .chain(granted -> again.start()
                                ? Uni.createFrom().item(item)
                                // The run ended as its place came: the place went back with it (end()).
                                : Uni.createFrom().<X>nothing());
            });
        }

        private void end() {
            if (claim.end()) {
                release();
            }
        }
    }

    /** Completes when a place is given to {@code claim}. */
    private Uni<Boolean> acquire(Lane lane, Claim claim) {
        LaneQueue queue = lane == Lane.PRIORITY ? priority : normal;
        return Uni.createFrom().emitter(emitter -> {
            boolean granted;
            synchronized (this) {
                granted = inFlight < limit && (claim.returning || !held.test(claim.producer)) && claim.grant();
                if (granted) {
                    inFlight++;
                } else {
                    claim.emitter = emitter;
                    queue.add(claim);
                }
            }
            if (granted) {
                emitter.complete(Boolean.TRUE);
            } else {
                emitter.onTermination(() -> {
                    synchronized (this) {
                        queue.remove(claim);
                    }
                });
            }
        });
    }

    /**
     * The claim the next free place goes to, taken off its queue and granted it (claims gone meanwhile skipped); null
     * when none waits. Holds the lock.
     */
    private Claim nextClaim() {
        Claim next;
        while ((next = nextInLine()) != null) {
            if (next.grant()) {
                return next;
            }
        }
        return null;
    }

    private Claim nextInLine() {
        Predicate<String> held = this.held;
        boolean priorityWaits = priority.hasUnheld(held);
        boolean normalWaits = normal.hasUnheld(held);
        if (!priorityWaits && !normalWaits) {
            return null;
        }
        if (priorityWaits && normalWaits) {
            normalCredit += minShare;
            if (normalCredit >= 1) {
                normalCredit -= 1;
                return normal.poll(held);
            }
            return priority.poll(held);
        }
        return priorityWaits ? priority.poll(held) : normal.poll(held);
    }

    private void release() {
        Claim next;
        synchronized (this) {
            inFlight--;
            next = inFlight < limit ? nextClaim() : null;
            if (next != null) {
                inFlight++;
            }
        }
        if (next != null) {
            next.given();
        }
    }

    /** The number of places now. */
    public synchronized int places() {
        return limit;
    }

    /** Places taken now (runs that had their turn and have not ended). */
    public synchronized int inFlight() {
        return inFlight;
    }

    /** Claims waiting for a place. */
    public synchronized int waiting() {
        return normal.size() + priority.size();
    }

    /** Claims of one lane waiting for a place. */
    public synchronized int waiting(Lane lane) {
        return lane == Lane.PRIORITY ? priority.size() : normal.size();
    }

    /** Claims of one producer waiting for a place, in both lanes. */
    public synchronized int waiting(String producer) {
        return normal.size(producer) + priority.size(producer);
    }

    /** Claims of producers other than {@code named} waiting for a place, in both lanes. */
    public synchronized int waitingOthers(Set<String> named) {
        return normal.sizeExcept(named) + priority.sizeExcept(named);
    }
}
