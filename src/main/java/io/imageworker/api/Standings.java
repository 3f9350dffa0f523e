package io.imageworker.api;

import io.imageworker.config.ProducerWeights;
import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.gateway.GatewayGuard;
import io.imageworker.spend.BudgetGuard;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * What a status answer says beyond {@code status} for a request not recorded: for a queued one, its position in its
 * producer's line and its estimate ({@link QueueEstimate}), or why it has none; for an unknown one, what this replica
 * can tell of the others (the partitions it owns). Read from memory only, in O(producers waiting) and the requests
 * that left its line out of order: it runs on the event loop.
 *
 * <p>Where producers are taken from their topics ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}, issue 49) a queued
 * request's estimate rests on its producer's own pace only ({@link QueueEstimate#ofOwn}, {@link OwnPace}): a producer
 * learns nothing of the others from it. Its reasons for no estimate are its own too: the gateway's pause is the
 * replica's, the cap is its producer's own ({@link BudgetGuard#holds}); the fleet's cap is never named.
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
    /** Where producers are taken from their topics, what their own estimates rest on; null otherwise. */
    private final OwnPace own;

    @Inject
    Standings(
            RequestStates states, WorkerConfig config, TopicSettings topics, GatewayGuard gateway, BudgetGuard budget) {
        this(
                states,
                ProducerWeights.of(config.producerWeights()),
                config.priorityMinShare(),
                () -> !gateway.isOpen(),
                budget::holds,
                config.producerIdentity() == WorkerConfig.ProducerIdentity.topic
                        ? new OwnPace(
                                Set.copyOf(config.producers().orElse(List.of()).stream()
                                        .map(String::trim)
                                        .toList()),
                                topics.requestPriority()
                                        .filter(topic -> !topic.isBlank())
                                        .isPresent(),
                                Math.max(1, config.concurrency()))
                        : null);
    }

    /** Standings of declared producers: the estimate from this replica's rate and the share of those waiting now. */
    Standings(
            RequestStates states,
            ProducerWeights weights,
            double minShare,
            BooleanSupplier gatewayPaused,
            Predicate<String> producerOverCap) {
        this(states, weights, minShare, gatewayPaused, producerOverCap, null);
    }

    Standings(
            RequestStates states,
            ProducerWeights weights,
            double minShare,
            BooleanSupplier gatewayPaused,
            Predicate<String> producerOverCap,
            OwnPace own) {
        this.states = states;
        this.weights = weights;
        this.minShare = minShare;
        this.gatewayPaused = gatewayPaused;
        this.producerOverCap = producerOverCap;
        this.own = own;
    }

    /**
     * What a producer's own estimate rests on where producers are taken from their topics, beside its own pace: the
     * producers named ({@code IMAGE_WORKER_PRODUCERS}, whose weights its guaranteed share is taken over), whether the
     * priority lane is on, and this replica's gateway slots ({@code IMAGE_WORKER_CONCURRENCY}). All static.
     */
    record OwnPace(Set<String> producers, boolean priorityLane, int slots) {}

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
        if (own != null) {
            return QueueEstimate.ofOwn(
                    standing,
                    states.ownCallsPerSecond(standing.lane(), standing.producer()),
                    states.ownCallMillis(standing.producer()),
                    QueueEstimate.guaranteedShare(
                            standing.producer(),
                            standing.lane(),
                            weights,
                            own.producers(),
                            own.priorityLane(),
                            minShare),
                    own.slots(),
                    Instant.now());
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
