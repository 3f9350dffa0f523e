package io.imageworker.messaging.intake;

import io.imageworker.gateway.PlacesInProgress;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.progress.RequestsInProgress.Place;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.Shutdown;
import io.imageworker.turns.FairTurns;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * The requests in progress as they step aside for their producer's own cap (contract v1.2, {@code
 * IMAGE_WORKER_BUDGET_PER_PRODUCER}), the gateway's {@link PlacesInProgress}.
 *
 * <p>A producer over its own cap (as far as this replica has read the shared budget log, {@link BudgetGuard#holds})
 * gets no turn ({@link Admission#holdWhile}): its records keep waiting, bounded in bytes, while the places go to the
 * others; its turns come again when its window allows another call (checked every {@link #RECHECK}, on a Vert.x timer).
 * A request of it already in progress whose call its cap refuses (another replica took the last places meanwhile)
 * gives its place back while it waits ({@link #of}) and takes it again, first of its producer, once its call has a
 * place in the budget: a capped producer never holds places in progress while it waits for its window, whatever it has
 * in them (its memory, if it loaded references, it keeps).
 */
@ApplicationScoped
public class SteppingAside implements PlacesInProgress {

    /** How often the turns of producers held by their cap, and the waits aside, are looked at again. */
    static final Duration RECHECK = Duration.ofMillis(250);

    /**
     * The place (turn and its copies' runs) of each request in progress, by its name, and of those waiting aside now
     * the signal that cuts their wait short (see {@link #of}).
     */
    private final RequestsInProgress progress;

    private final Admission admission;
    private final Shutdown shutdown;
    private final Vertx vertx;
    private final long timer;

    /**
     * With per-producer caps set in {@code budget}, a producer gets no turn from {@code admission} while it is over its
     * cap, and the caps are looked at again every {@link #RECHECK} on {@code vertx}'s timers.
     */
    @Inject
    SteppingAside(
            Admission admission, RequestsInProgress progress, BudgetGuard budget, Shutdown shutdown, Vertx vertx) {
        this.admission = admission;
        this.progress = progress;
        this.shutdown = shutdown;
        this.vertx = vertx;
        if (budget.producerBudgets().isEmpty()) {
            this.timer = -1;
            return;
        }
        holdWhile(budget::holds);
        budget.countHeldInIntake(admission::waiting);
        this.timer = vertx.setPeriodic(RECHECK.toMillis(), RECHECK.toMillis(), id -> recheck());
    }

    /**
     * Gives no turn to a producer while {@code held} says so ({@link #recheck()} gives them again after), until the
     * worker drains: then every waiting record has its turn, to end it (left unacknowledged), so that the drain does not
     * wait for records whose producer's window is hours away.
     */
    void holdWhile(Predicate<String> held) {
        admission.holdWhile(producer -> shutdown.callsAllowed() && held.test(producer));
    }

    /**
     * Gives the free places to records whose producer is held no more, and ends the waits aside of requests whose
     * partition went to another worker (or that the drain ends).
     */
    void recheck() {
        progress.forEachAside(placed -> {
            if (!placed.mayGoOn()) {
                placed.endAside();
            }
        });
        admission.recheck();
    }

    @PreDestroy
    void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    /**
     * Request {@code requestId} (null: none) went into progress in {@code turn}, its record's run {@code run}: from now
     * on it may step aside ({@link #of}). A copy of it that holds a place already shares it, {@code run} beside its
     * own: whether the request may call is asked of both, so that a copy given up in a rebalance does not hand over
     * the copy read again after it. What ends this copy's hold is returned.
     */
    Held placed(String requestId, FairTurns.Turn turn, InFlight.Run run) {
        if (requestId == null) {
            return Held.NOTHING;
        }
        Place place = progress.place(requestId, turn, run);
        return new Held(() -> progress.unplace(requestId, place, run));
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
        Place placed = placeOf(requestId);
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
                // The run that waits aside is the one that comes back: the copy acting for the request now.
                AtomicReference<RequestsInProgress.Taken> acting = new AtomicReference<>();
                return Uni.createFrom()
                        .deferred(() -> {
                            RequestsInProgress.Taken run = placed.run();
                            if (run != null) {
                                acting.set(run);
                                run.waiting();
                            }
                            placed.aside(gone);
                            Uni<T> waiting = Uni.join().first(wait, handedOver).toTerminate();
                            FairTurns.Turn turn = placed.turn();
                            return turn == null ? waiting : turn.aside(waiting);
                        })
                        .onTermination()
                        .invoke(() -> {
                            placed.back();
                            RequestsInProgress.Taken run = acting.get();
                            if (run != null) {
                                run.admitted();
                            }
                        })
                        .chain(item -> placed.mayGoOn()
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
        Place placed = placeOf(requestId);
        return placed == null || placed.waitsToCall();
    }

    @Override
    public boolean callLeaves(String requestId) {
        Place placed = placeOf(requestId);
        return placed == null || placed.callLeaves();
    }

    /** The place of request {@code requestId} (null: none) in progress here, or null. */
    private Place placeOf(String requestId) {
        return requestId == null ? null : progress.placeOf(requestId).orElse(null);
    }
}
