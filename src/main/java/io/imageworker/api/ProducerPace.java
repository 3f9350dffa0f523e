package io.imageworker.api;

import io.imageworker.contract.Lane;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Each producer's own pace on this replica, where producers are taken from their topics ({@code
 * IMAGE_WORKER_PRODUCER_IDENTITY=topic}, issue 49): how fast its line in each lane was served lately (its requests that
 * left the line by their first call, a {@link CallRate} per lane) and how long its own requests' calls took. What a
 * producer's status estimate rests on in that mode, so that it tells nothing of the other producers but what they
 * left to this one: no count of theirs, no rate of the replica's.
 *
 * <p>Bounded by the configuration: only the producers named ({@code IMAGE_WORKER_PRODUCERS}) are counted, two rates of
 * fixed size each (about 2 KB), made at their first call and kept.
 */
final class ProducerPace {

    private final Duration window;
    private final Set<String> producers;
    /** Each producer's rates, indexed by {@link Lane#ordinal()}. */
    private final Map<String, CallRate[]> rates = new ConcurrentHashMap<>();

    /** The pace of {@code producers} (no other is counted), each rate over {@code window}. */
    ProducerPace(Duration window, Set<String> producers) {
        this.window = window;
        this.producers = Set.copyOf(producers);
    }

    /** A request of {@code producer} left its line in {@code lane} by its first call, at {@code nowMillis}. */
    void served(Lane lane, String producer, long nowMillis) {
        CallRate[] of = of(producer);
        if (of != null) {
            of[lane.ordinal()].started(nowMillis);
        }
    }

    /** A request of {@code producer} whose first call left {@code lengthMillis} ago finished. */
    void finished(String producer, long lengthMillis) {
        CallRate[] of = of(producer);
        if (of != null) {
            for (CallRate rate : of) {
                rate.finished(lengthMillis);
            }
        }
    }

    /**
     * Requests of {@code producer} that left its line in {@code lane} by their first call, per second over the window
     * at {@code nowMillis}; empty when none did, or none of its requests' calls finished yet.
     */
    OptionalDouble perSecond(Lane lane, String producer, long nowMillis) {
        CallRate[] of = rates.get(producer);
        return of == null ? OptionalDouble.empty() : of[lane.ordinal()].perSecond(nowMillis);
    }

    /** The mean length of {@code producer}'s last requests' calls (first call to end); empty when none finished. */
    OptionalLong callMillis(String producer) {
        CallRate[] of = rates.get(producer);
        return of == null ? OptionalLong.empty() : of[0].meanLengthMillis();
    }

    private CallRate[] of(String producer) {
        if (producer == null || !producers.contains(producer)) {
            return null;
        }
        return rates.computeIfAbsent(producer, name -> {
            CallRate[] each = new CallRate[Lane.values().length];
            for (int i = 0; i < each.length; i++) {
                each[i] = new CallRate(window);
            }
            return each;
        });
    }
}
