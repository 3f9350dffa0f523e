package io.imageworker.api;

import io.imageworker.config.ProducerWeights;
import io.imageworker.config.WorkerConfig;
import io.imageworker.gateway.GatewayGuard;
import io.imageworker.processing.ProducerLines;
import io.imageworker.processing.RequestStates;
import io.imageworker.spend.BudgetGuard;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * What a status answer says beyond {@code status} for a request not recorded: for a queued one, its position in its
 * producer's line and its estimate ({@link QueueEstimate}), or why it has none; for an unknown one, what this replica
 * can tell of the others (the partitions it owns). Read from memory only, in O(producers waiting) and the requests
 * that left its line out of order: it runs on the event loop.
 */
@ApplicationScoped
class Standings {

    /** The note of a request parked by this replica. */
    static final String PARKED = "parked by this replica: it waits in the parked topic to be read back, here or by"
            + " another replica, and has no position until then";

    /** The note of a request held here in no line. */
    static final String IN_NO_LINE = "held by this replica but in no producer's line (a second copy of an id already"
            + " waiting, or its work just ended): no position";

    private final RequestStates states;
    private final ProducerWeights weights;
    private final double minShare;
    private final BooleanSupplier gatewayPaused;
    private final Predicate<String> producerOverCap;

    @Inject
    Standings(RequestStates states, WorkerConfig config, GatewayGuard gateway, BudgetGuard budget) {
        this(
                states,
                ProducerWeights.of(config.producerWeights()),
                config.priorityMinShare(),
                () -> !gateway.isOpen(),
                budget::holds);
    }

    Standings(
            RequestStates states,
            ProducerWeights weights,
            double minShare,
            BooleanSupplier gatewayPaused,
            Predicate<String> producerOverCap) {
        this.states = states;
        this.weights = weights;
        this.minShare = minShare;
        this.gatewayPaused = gatewayPaused;
        this.producerOverCap = producerOverCap;
    }

    /** The answer for {@code requestId}, held here in {@code state}. */
    RequestStatus held(String requestId, RequestStates.State state) {
        return held(requestId, requestId, state);
    }

    /** The answer for {@code requestId}, held here in {@code state} under {@code name} ({@code RequestStates.name}). */
    RequestStatus held(String requestId, String name, RequestStates.State state) {
        if (state != RequestStates.State.QUEUED) {
            return RequestStatus.held(requestId, state, null, null);
        }
        Optional<ProducerLines.Standing> standing = states.standing(name);
        if (standing.isEmpty()) {
            return RequestStatus.held(
                    requestId,
                    state,
                    RequestStatus.Queue.withoutEstimate(null, QueueEstimate.NO_POSITION),
                    states.parkedHere(name) ? PARKED : IN_NO_LINE);
        }
        return RequestStatus.held(requestId, state, queue(standing.get()), null);
    }

    private RequestStatus.Queue queue(ProducerLines.Standing standing) {
        if (gatewayPaused.getAsBoolean()) {
            return RequestStatus.Queue.withoutEstimate(standing.position(), QueueEstimate.GATEWAY_PAUSED);
        }
        if (producerOverCap.test(standing.producer())) {
            return RequestStatus.Queue.withoutEstimate(standing.position(), QueueEstimate.PRODUCER_OVER_CAP);
        }
        return QueueEstimate.of(standing, states.callsPerSecond(), weights, minShare, Instant.now());
    }

    /** The answer for {@code requestId}, neither recorded nor held here. */
    RequestStatus unknown(String requestId) {
        Optional<RequestStates.Owned> owned = states.owned();
        if (owned.isEmpty()) {
            return RequestStatus.unknown(
                    requestId,
                    null,
                    "this replica owns no partition of the request topics yet (it is starting, or its group is"
                            + " rebalancing): another replica may hold the request");
        }
        int of = owned.get().owned();
        int total = owned.get().total();
        boolean everyPartition = total >= 0 && of >= total;
        RequestStatus.Replica replica = new RequestStatus.Replica(of, total < 0 ? null : total, !everyPartition);
        return RequestStatus.unknown(requestId, replica, note(of, total));
    }

    private static String note(int owned, int total) {
        if (total >= 0 && owned >= total) {
            return "this replica owns every partition of the request topics, so no other replica holds the request:"
                    + " it has not arrived, or waits in Kafka (beyond the read-ahead, or parked)";
        }
        String of = total < 0 ? owned + " partition(s)" : owned + " of the " + total + " partitions";
        return "this replica owns " + of + " of the request topics: the request may be held by another replica (ask"
                + " again, or follow the result topics), wait in Kafka, or not have arrived";
    }
}
