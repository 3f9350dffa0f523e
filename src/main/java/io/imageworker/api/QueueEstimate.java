package io.imageworker.api;

import io.imageworker.config.ProducerWeights;
import io.imageworker.contract.Lane;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * The arithmetic of a queued request's estimate: when its first gateway call should leave, from its position in its
 * producer's line, the rate at which calls left this replica lately, and its producer's share of them.
 *
 * <p>The share is what the fair turns give its producer while the producers waiting now keep waiting: its weight over
 * the weights of every producer with requests waiting in its lane ({@code IMAGE_WORKER_PRODUCER_WEIGHTS}), and, while
 * the other lane has waiting requests too, its lane's part: the normal lane's least share ({@code
 * IMAGE_WORKER_PRIORITY_MIN_SHARE}), or the rest for the priority lane. The estimate is then {@code position / (rate x
 * share)} seconds from now: the time this replica takes, at its recent pace, to give its producer that many call
 * slots. It knows nothing of what comes later (a producer that starts publishing, a gateway that slows down, a cap),
 * of requests ahead that take several calls (variants, retries), nor of an idle worker's free slots (a request first
 * in line there leaves at once): it is a replica's own recent rate under the current set of producers, no more.
 *
 * <p>Where producers are taken from their topics ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}, issue 49) the share
 * above would tell a producer who else waits (the weights are the operator's, so a share of 0.2 beside a weight of 1
 * says that weights of 4 wait), and the replica's rate how busy the others keep it. There the estimate rests on what
 * is the producer's own ({@link #ofOwn}): the rate at which its requests in its lane left their line by their first
 * call here lately ({@link #OWN_CALLS}), which is what its share actually got; or, with none lately, the pace its
 * guaranteed share promises ({@link #GUARANTEED_SHARE}): its weight over the weights of every producer named in {@code
 * IMAGE_WORKER_PRODUCERS}, times its lane's least part when the priority lane is on ({@link #guaranteedShare}), of this
 * replica's gateway slots ({@code IMAGE_WORKER_CONCURRENCY}), each held for the mean length of its own last calls. Both
 * are static or its own: nothing in the answer moves when another producer starts or stops but through what this
 * producer's own requests get.
 */
final class QueueEstimate {

    /** Why a queued request has no estimate: no call left this replica within the rate's window. */
    static final String NO_RECENT_CALLS = "NO_RECENT_CALLS";

    /** Why: its lane gets no call while the priority lane has waiting requests ({@code min-share} 0). */
    static final String PRIORITY_FIRST = "PRIORITY_FIRST";

    /** Why: it stands in no producer's line here (parked, or a second copy of an id). */
    static final String NO_POSITION = "NO_POSITION";

    /** Why: intake is paused on a gateway fault (a dead token, a wrong address) until the gateway answers again. */
    static final String GATEWAY_PAUSED = "GATEWAY_PAUSED";

    /** Why: its producer is over its own spend cap, until its window allows another call. */
    static final String PRODUCER_OVER_CAP = "PRODUCER_OVER_CAP";

    /** The basis of a producer's own estimate: its own requests' first calls that left here lately. */
    static final String OWN_CALLS = "OWN_CALLS";

    /** The basis: its guaranteed share of this replica's slots, at the length of its own last calls. */
    static final String GUARANTEED_SHARE = "GUARANTEED_SHARE";

    private QueueEstimate() {}

    /** The queue part of the answer for {@code standing} at {@code now}, with {@code callsPerSecond} of late. */
    static RequestStatus.Queue of(
            ProducerLines.Standing standing,
            OptionalDouble callsPerSecond,
            ProducerWeights weights,
            double minShare,
            Instant now) {
        double share = share(standing, weights, minShare);
        if (callsPerSecond.isEmpty()) {
            return RequestStatus.Queue.withoutEstimate(standing.position(), NO_RECENT_CALLS);
        }
        double rate = callsPerSecond.getAsDouble();
        if (share <= 0) {
            return RequestStatus.Queue.withoutEstimate(standing.position(), PRIORITY_FIRST);
        }
        double seconds = standing.position() / (rate * share);
        return new RequestStatus.Queue(
                standing.position(),
                now.plus(Duration.ofMillis(Math.round(seconds * 1000))),
                rounded(seconds, 10),
                rounded(rate, 100),
                rounded(share, 1000),
                null,
                null);
    }

    /**
     * The queue part of the answer for {@code standing} at {@code now} where producers are taken from their topics,
     * from its producer's own pace only: {@code ownRate}, its requests in its lane that left their line by their first
     * call per second lately; else {@code guaranteedShare} of {@code slots}, each held for {@code ownCallMillis}, the
     * mean length of its last calls. No estimate ({@link #NO_RECENT_CALLS}) without either (its producer has had no
     * call here yet); {@link #PRIORITY_FIRST} when it has no rate of its own and its lane is guaranteed no slot (the
     * normal lane with {@code min-share} 0).
     */
    static RequestStatus.Queue ofOwn(
            ProducerLines.Standing standing,
            OptionalDouble ownRate,
            OptionalLong ownCallMillis,
            double guaranteedShare,
            int slots,
            Instant now) {
        double rate;
        String basis;
        if (ownRate.isPresent() && ownRate.getAsDouble() > 0) {
            rate = ownRate.getAsDouble();
            basis = OWN_CALLS;
        } else if (ownCallMillis.isEmpty()) {
            return RequestStatus.Queue.withoutEstimate(standing.position(), NO_RECENT_CALLS);
        } else if (guaranteedShare <= 0 || slots <= 0) {
            return RequestStatus.Queue.withoutEstimate(standing.position(), PRIORITY_FIRST);
        } else {
            rate = guaranteedShare * slots * 1000.0 / Math.max(1, ownCallMillis.getAsLong());
            basis = GUARANTEED_SHARE;
        }
        double seconds = standing.position() / rate;
        return new RequestStatus.Queue(
                standing.position(),
                now.plus(Duration.ofMillis(Math.round(seconds * 1000))),
                rounded(seconds, 10),
                rounded(rate, 100),
                null,
                basis,
                null);
    }

    /**
     * The least part of a replica's gateway slots the fair turns give {@code producer}'s requests in {@code lane}
     * whoever else waits: its weight over the weights of all {@code producers} (the configured ones, a static sum),
     * times, with the priority lane on, the normal lane's least share ({@code minShare}) or the rest for the priority
     * lane (what each lane gets while the other waits too).
     */
    static double guaranteedShare(
            String producer,
            Lane lane,
            ProducerWeights weights,
            Collection<String> producers,
            boolean priorityLane,
            double minShare) {
        long total = 0;
        for (String each : producers) {
            total += weights.of(each);
        }
        if (!producers.contains(producer)) {
            total += weights.of(producer);
        }
        double ofLane = total == 0 ? 1 : (double) weights.of(producer) / total;
        if (!priorityLane) {
            return ofLane;
        }
        return ofLane * (lane == Lane.PRIORITY ? 1 - minShare : minShare);
    }

    /** The part of this replica's calls that {@code standing}'s producer gets while everyone waiting keeps waiting. */
    static double share(ProducerLines.Standing standing, ProducerWeights weights, double minShare) {
        long total = 0;
        for (String producer : standing.producersInLane()) {
            total += weights.of(producer);
        }
        double ofLane = total == 0 ? 1 : (double) weights.of(standing.producer()) / total;
        if (!standing.otherLaneWaits()) {
            return ofLane;
        }
        return ofLane * (standing.lane() == Lane.PRIORITY ? 1 - minShare : minShare);
    }

    private static double rounded(double value, int per) {
        return Math.round(value * per) / (double) per;
    }
}
