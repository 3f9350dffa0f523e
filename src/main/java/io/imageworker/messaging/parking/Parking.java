package io.imageworker.messaging.parking;

import io.imageworker.config.WorkerConfig;
import io.imageworker.messaging.intake.ParkingDecision;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.RecordCopy;
import io.imageworker.progress.RequestsInProgress;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Which records offered for parking are parked instead of read ahead (fair shares at any backlog): a record beyond its
 * partition's window ({@code offsets.PartitionWork#within}), which would otherwise wait there and, once the read-ahead
 * is full of such records, hold every producer behind it; or a record of a producer that already has {@code
 * IMAGE_WORKER_PARK_AFTER} records waiting for their turn, so that one producer's backlog never fills the read-ahead;
 * or a copy of a request this replica parked lately or is parking now ({@link #AGAIN}), so that the two copies have
 * one owner. Parking itself (the copy to the parked topic in the transaction of the record's offset) is {@link
 * RequestParking}'s, and the record waits in the read-ahead ({@code messaging.intake.ReadAhead}, which asks this
 * through {@link ParkingDecision}); this decides and counts ({@code image_worker_requests_parked{reason}}), and tells
 * the registry of what is in progress of each park under way and each request parked ({@link
 * RequestsInProgress#parked}, by this class alone), where the status queries read it too.
 *
 * <p>Every record beyond the window is parked, whoever its producer, so that above a partition's window everything
 * finished is parked in one run of offsets: the commit's metadata names it as a range, and what finished within the
 * window still fits whatever its pattern ({@code offsets.FinishedAbove}).
 */
@Singleton
public class Parking implements ParkingDecision {

    /** Why a record was parked: beyond its partition's window. */
    static final String WINDOW = "window";

    /** Why a record was parked: its producer had its share of the read-ahead waiting already. */
    static final String SHARE = "share";

    /**
     * Why a record was parked: it is a copy of a request parked here lately, parked after it (into the partition the
     * first copy went to, {@link ParkedPartitions}) so that one owner reads both, in order; worked here at once, it
     * could run while the parked copy runs on the replica that reads it back (issue 48).
     */
    static final String AGAIN = "again";

    private final int after;
    private final Predicate<RecordCopy> fits;
    private final Map<String, Counter> parked;
    /**
     * Where the requests parked here lately are remembered (and read as queued), and those whose park is under way here
     * (its transaction not yet committed) are known: a copy read meanwhile is parked after them too ({@link #why}).
     */
    private final RequestsInProgress progress;

    /** The worker's: parks past {@code IMAGE_WORKER_PARK_AFTER}, its window that of {@link InFlight#fitsNow}. */
    @Inject
    Parking(WorkerConfig config, InFlight inFlight, MeterRegistry registry, RequestsInProgress progress) {
        this(config.parkAfterLimit(), inFlight::fitsNow, registry, progress);
    }

    /**
     * @param after records of one producer waiting for their turn from which its next ones are parked
     * @param fits whether a record lies within its partition's window now
     * @param progress where the parks under way and the requests parked are told, and those parked lately read
     */
    public Parking(int after, Predicate<RecordCopy> fits, MeterRegistry registry, RequestsInProgress progress) {
        this.after = Math.max(1, after);
        this.fits = fits;
        this.progress = progress;
        this.parked = Map.of(
                WINDOW, counter(registry, WINDOW), SHARE, counter(registry, SHARE), AGAIN, counter(registry, AGAIN));
    }

    private static Counter counter(MeterRegistry registry, String reason) {
        return Counter.builder("image_worker_requests_parked")
                .description("Records of the request topic copied to the parked topic (in the transaction of their"
                        + " offset) instead of read ahead: beyond their partition's window, past their producer's"
                        + " share of the read-ahead, or copies of a request parked lately")
                .tag("reason", reason)
                .register(registry);
    }

    /**
     * Why {@code record} is parked, or null when it is read ahead. A copy of a request parked here lately (among the
     * last {@link RequestsInProgress#PARKED_KEPT}, or its park still under way, its transaction not committed yet) is parked
     * too, after the first copy and into the same partition of the parked topic: worked here at once, it could run
     * while the parked copy runs on the replica that reads it back, two calls (issue 48); parked, one owner reads
     * both, in order, and the second joins or replays the first.
     */
    @Override
    public String why(RecordCopy record, String requestId, int waitingOfProducer) {
        String why = !fits.test(record) ? WINDOW : waitingOfProducer >= after ? SHARE : null;
        if (why == null && requestId != null && (progress.parking(requestId) || progress.parkedLately(requestId))) {
            return AGAIN;
        }
        return why;
    }

    @Override
    public void underWay(String requestId) {
        if (requestId != null) {
            progress.parkUnderWay(requestId);
        }
    }

    /** Counted for {@code why}; a request reads queued here among those parked lately. */
    @Override
    public void parked(String requestId, String why) {
        parked.get(why).increment();
        if (requestId != null) {
            progress.parked(requestId);
        }
    }

    @Override
    public void over(String requestId) {
        if (requestId != null) {
            progress.parkOver(requestId);
        }
    }
}
