package io.imageworker.api;

import io.imageworker.config.ProducerWeights;
import io.imageworker.contract.Lane;
import io.imageworker.processing.ProducerLines;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalDouble;

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
                null);
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
