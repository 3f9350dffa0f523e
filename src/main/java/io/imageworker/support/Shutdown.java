package io.imageworker.support;

import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;

/**
 * The two steps of a graceful shutdown, as the gateway calls and the end of a request see them.
 *
 * <p><b>Draining</b> (from SIGTERM): no gateway call starts any more. A call in flight is let finish, its image stored
 * and its event published, within the shutdown grace, which is sized for a full call; a billed refusal it gets is
 * published as usual. A request that would need a new call (it has none in flight yet, waits for a retry, a pause or
 * a place in the spend budget) is given up at once with {@link AbandonedException}: its record is redelivered to the
 * next worker, and nothing was spent on it here. Without this rule a call started late in the drain would be cut off
 * by the exit and billed a second time by the next worker.
 *
 * <p><b>Abandoned</b> (the grace is over): besides, none of the requests still running ends as a failure, recorded or
 * published. A failure then may be the shutdown's own doing (clients closing under a call), and a recorded one would
 * be replayed to the next worker as the request's outcome. A success is still stored and recorded, which spares the
 * next worker a second billed call. Such requests end with {@link AbandonedException}, so their records are left for
 * redelivery.
 */
@ApplicationScoped
public class Shutdown {

    private final CompletableFuture<Void> drainStarted = new CompletableFuture<>();
    private volatile boolean draining;
    private volatile boolean abandoned;

    /** Called on SIGTERM: no new gateway call from now on; waits that would end in one end now. */
    public void startDraining() {
        draining = true;
        drainStarted.complete(null);
    }

    /** Called when the shutdown grace is over. */
    public void abandonUnfinished() {
        startDraining();
        abandoned = true;
    }

    /** Whether a new gateway call may start: not once the worker drains. */
    public boolean callsAllowed() {
        return !draining;
    }

    /** Whether the grace is over: no failure is recorded or published any more. */
    public boolean abandoned() {
        return abandoned;
    }

    /**
     * {@code wait} (a pause, a back-off, a wait for budget), cut short when the drain starts: the request is then
     * given up with {@link AbandonedException} instead of waiting for a call it may not make.
     */
    public <T> Uni<T> unlessDraining(String requestId, Uni<T> wait) {
        // A dependent stage per subscriber: cancelling it (when the wait wins) leaves the shared signal untouched.
        Uni<T> drained = Uni.createFrom()
                .completionStage(() -> drainStarted.thenApply(ignored -> null))
                .onItem()
                .transformToUni(ignored -> Uni.createFrom().<T>failure(new AbandonedException(requestId, null)));
        return Uni.combine().any().of(wait, drained);
    }
}
