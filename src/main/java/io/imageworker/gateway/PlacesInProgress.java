package io.imageworker.gateway;

import io.imageworker.spend.BudgetGuard;

/**
 * The requests in progress, as the intake holds them ({@code messaging.intake.SteppingAside}): how a request gives its place back
 * while it waits for its producer's own cap (contract v1.2), so that the other producers' requests take it meanwhile;
 * and whether its gateway calls may still leave from this worker, or its partition is being taken away by a rebalance
 * (its record then goes to the partition's new owner, which makes the call once). A request is named by its stored
 * name ({@code ImageRequest.storageId()}: its id, or {@code <producer>/<requestId>} where ids are unique within their
 * producer), so that two producers' requests of one id are two requests here.
 */
public interface PlacesInProgress {

    /** How request {@code requestId} steps aside while it waits; {@link BudgetGuard.Aside#NONE} if it holds no place. */
    BudgetGuard.Aside of(String requestId);

    /**
     * Request {@code requestId} is about to wait for a chance to call the gateway (a slot, a pause, the spend guard, a
     * back-off): whether it may still make a call here. False once its partition is being taken away: it then ends at
     * once, with no call, and its record goes to the new owner. A rebalance does not wait for a request that waits so
     * before its first call.
     */
    default boolean waitsToCall(String requestId) {
        return true;
    }

    /**
     * A gateway call of request {@code requestId} is about to leave: whether it may. False once its partition is being
     * taken away: the call does not leave. From a true on, a rebalance that takes the partition away waits for the
     * request to end (within {@code IMAGE_WORKER_REBALANCE_GRACE}), so the call is neither cut off nor made twice.
     */
    default boolean callLeaves(String requestId) {
        return true;
    }
}
