package io.imageworker.gateway;

/**
 * The places in progress of the requests (the intake's, {@code messaging.Intake}): how a request gives its place back
 * while it waits for its producer's own cap (contract v1.2), so that the other producers' requests take it meanwhile.
 */
public interface PlacesInProgress {

    /** How request {@code requestId} steps aside while it waits; {@link BudgetGuard.Aside#NONE} if it holds no place. */
    BudgetGuard.Aside of(String requestId);
}
