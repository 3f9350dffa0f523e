package io.imageworker.progress;

import io.imageworker.contract.Lane;
import io.imageworker.gateway.CallListener;
import java.util.Optional;

/**
 * The course of the requests held here, as the layers below the status read model tell it: the one way they tell it
 * anything. A record read ahead is queued in its producer's line ({@link #queued}, by {@code messaging.intake.ReadAhead});
 * a gateway call of a request leaves ({@link CallListener#sent}, by {@code gateway.GatewayCalls}, which tells every
 * {@link CallListener}); a request's work ends ({@link #ended}, by {@code processing.RequestProcessor}); a rebalance
 * leaves this replica owning some of the request topics' partitions ({@link #partitions}, by {@code
 * messaging.offsets.RevocationGrace}).
 *
 * <p>Implemented by the status read model ({@code api.RequestStates}), which keeps from them what a status query reads
 * beyond this registry: where each queued request stands in its producer's line, the recent rate of calls, the
 * partitions owned. What the registry holds (a request's work begun and whether a call of it has left, its records
 * waiting for their turn or being parked, the requests parked lately) the layers below tell the registry ({@link
 * RequestsInProgress}), and the read model reads it there. Each event returns at once, on the thread that tells it.
 */
public interface RequestEvents extends CallListener {

    /**
     * A record of request {@code name} of {@code producer}, taken from {@code lane}, waits for its turn (read ahead):
     * it joins its producer's line, where it stands until its first call leaves, its work ends, or the returned action
     * runs (it ends waiting, or its partition goes to another worker); that action does its work once, however often
     * it runs.
     */
    Runnable queued(String name, Lane lane, String producer);

    /**
     * The work of request {@code name} ended, however it did: {@code work} is what the registry held of it ({@link
     * RequestsInProgress#over}: when its first call left), empty when it was not under way.
     */
    void ended(String name, Optional<RequestsInProgress.Work> work);

    /**
     * This replica owns {@code owned} of the {@code total} partitions of request topic {@code topic} (a total below 0:
     * not known); told after each assignment and revocation.
     */
    void partitions(String topic, int owned, int total);
}
