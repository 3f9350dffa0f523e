package io.imageworker.messaging.intake;

import io.imageworker.messaging.offsets.RecordCopy;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Which records offered for parking are parked instead of read ahead (fair shares at any backlog): a record beyond its
 * partition's window ({@code offsets.PartitionWork#within}), which would otherwise wait there and, once the read-ahead
 * is full of such records, hold every producer behind it; or a record of a producer that already has {@code
 * IMAGE_WORKER_PARK_AFTER} records waiting for their turn, so that one producer's backlog never fills the read-ahead;
 * or a copy of a request this replica parked lately ({@link #AGAIN}), so that the two copies have one owner.
 * Parking itself (the copy to the parked topic in the transaction of the record's offset) is the consumer's; this
 * decides and counts ({@code image_worker_requests_parked{reason}}).
 *
 * <p>Every record beyond the window is parked, whoever its producer, so that above a partition's window everything
 * finished is parked in one run of offsets: the commit's metadata names it as a range, and what finished within the
 * window still fits whatever its pattern ({@code offsets.FinishedAbove}).
 */
final class Parking {

    /** Why a record was parked: beyond its partition's window. */
    static final String WINDOW = "window";

    /** Why a record was parked: its producer had its share of the read-ahead waiting already. */
    static final String SHARE = "share";

    /**
     * Why a record was parked: it is a copy of a request parked here lately, parked after it (into the partition the
     * first copy went to, {@code parking.ParkedPartitions}) so that one owner reads both, in order; worked here at
     * once, it could run while the parked copy runs on the replica that reads it back (issue 48).
     */
    static final String AGAIN = "again";

    private final int after;
    private final Predicate<RecordCopy> fits;
    private final Map<String, Counter> parked;

    /**
     * @param after records of one producer waiting for their turn from which its next ones are parked
     * @param fits whether a record lies within its partition's window now
     */
    Parking(int after, Predicate<RecordCopy> fits, MeterRegistry registry) {
        this.after = Math.max(1, after);
        this.fits = fits;
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
     * Why {@code record} is parked, or null when it is read ahead.
     *
     * @param waitingOfProducer records of its producer waiting for their turn now
     */
    String why(RecordCopy record, int waitingOfProducer) {
        if (!fits.test(record)) {
            return WINDOW;
        }
        return waitingOfProducer >= after ? SHARE : null;
    }

    /** A record parked for {@code reason} ({@link #why}): its copy and its offset committed. */
    void counted(String reason) {
        parked.get(reason).increment();
    }
}
