package io.imageworker.spend;

import io.imageworker.support.Pauses;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The requests the spend guard holds now, each counted while it waits for a window: held by the fleet's cap ({@code
 * image_worker_budget_held_requests}) or by its producer's own ({@code image_worker_budget_producer_held_requests}),
 * and the spend guard's pause ({@link Pauses.Reason#BUDGET}) while any is. Apart from the guard, which decides when a
 * request waits; this keeps the counts and the pause in step.
 */
final class HeldRequests {

    private final Pauses pauses;
    /** Requests held by the fleet's cap. */
    private final AtomicInteger fleetCount = new AtomicInteger();
    /** Requests of each capped producer held for the producer's own cap. */
    private final Map<String, AtomicInteger> producerCounts = new ConcurrentHashMap<>();

    HeldRequests(Pauses pauses) {
        this.pauses = pauses;
    }

    /** How one reservation of {@code producer} is counted while it waits. */
    Holding holding(String producer) {
        return new Holding(producer);
    }

    /** Requests held now by the fleet's cap. */
    int fleet() {
        return fleetCount.get();
    }

    /** Requests of {@code producer} held now by its own cap. */
    int byProducer(String producer) {
        AtomicInteger count = producerCounts.get(producer);
        return count == null ? 0 : count.get();
    }

    /** What one reservation is counted as, while it waits: held by the fleet's cap, by its producer's, or neither. */
    final class Holding {
        private final String producer;
        private boolean fleet;
        private boolean own;

        Holding(String producer) {
            this.producer = producer;
        }

        synchronized void fleet(boolean now) {
            if (now != fleet) {
                fleet = now;
                count(fleetCount, now);
            }
        }

        synchronized void producer(boolean now) {
            if (now != own) {
                own = now;
                // Only a producer with a cap of its own is ever held by it: as many counts as the setting names.
                count(producerCounts.computeIfAbsent(producer, name -> new AtomicInteger()), now);
            }
        }

        /**
         * One request more (or less) in {@code count}, and in the pause of the spend guard: the pause begins before
         * the count shows the request and ends after it no longer does, so that whoever sees a request held sees the
         * pause too (readiness, the stuck-record check).
         */
        private void count(AtomicInteger count, boolean more) {
            if (more) {
                pauses.begin(Pauses.Reason.BUDGET);
                count.incrementAndGet();
            } else {
                count.decrementAndGet();
                pauses.end(Pauses.Reason.BUDGET);
            }
        }

        void end() {
            fleet(false);
            producer(false);
        }
    }
}
