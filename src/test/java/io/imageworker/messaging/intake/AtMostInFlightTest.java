package io.imageworker.messaging.intake;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AtMostInFlightTest {

    /** Handlings started, in order, each ended by the test through its emitter. */
    private final List<UniEmitter<? super Void>> started = new ArrayList<>();

    private final List<Integer> items = new ArrayList<>();
    private final List<Throwable> failures = new ArrayList<>();
    private final AtomicBoolean upstreamCancelled = new AtomicBoolean();
    private final AtomicInteger cancelledHandlings = new AtomicInteger();

    private AtMostInFlight<Integer> handlingAtMost(int width) {
        return new AtMostInFlight<>(
                width,
                item -> Uni.createFrom().emitter(emitter -> {
                    items.add(item);
                    started.add(emitter);
                }),
                failures::add);
    }

    @Test
    void handlesAtMostItsWidthAtOnceAndTakesTheNextItemAsEachHandlingEnds() {
        AtMostInFlight<Integer> handling = handlingAtMost(3);
        Multi.createFrom().range(0, 10).subscribe().withSubscriber(handling);

        assertThat(items).containsExactly(0, 1, 2);
        assertThat(handling.running()).isEqualTo(3);

        started.get(1).complete(null);
        assertThat(items).containsExactly(0, 1, 2, 3);
        started.get(0).complete(null);
        started.get(2).complete(null);
        assertThat(items).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(handling.running()).isEqualTo(3);

        for (int i = 3; i < 10; i++) {
            started.get(i).complete(null);
        }
        assertThat(items).hasSize(10);
        assertThat(handling.running()).isZero();
        assertThat(failures).isEmpty();
    }

    @Test
    void handlingsThatEndAtOnceTakeAWholeStreamWithoutDeepeningTheStack() {
        AtomicInteger handled = new AtomicInteger();
        AtMostInFlight<Integer> handling = new AtMostInFlight<>(
                2, item -> Uni.createFrom().voidItem().invoke(handled::incrementAndGet), failures::add);

        Multi.createFrom().range(0, 200_000).subscribe().withSubscriber(handling);

        assertThat(handled).hasValue(200_000);
        assertThat(failures).isEmpty();
    }

    @Test
    void aFailedHandlingEndsTheStreamAndCancelsTheHandlingsStillRunning() {
        AtMostInFlight<Integer> handling = cancellableHandlingAtMost(3);

        IllegalStateException defect = new IllegalStateException("defect");
        started.get(1).fail(defect);
        started.get(0).fail(new IllegalStateException("a second one"));

        assertThat(failures).containsExactly(defect);
        assertThat(upstreamCancelled).isTrue();
        assertThat(cancelledHandlings).hasValue(2);
        assertThat(started).hasSize(3);
    }

    @Test
    void cancellingTheSubscriptionCancelsTheUpstreamAndTheHandlingsStillRunning() {
        AtMostInFlight<Integer> handling = cancellableHandlingAtMost(2);
        started.get(0).complete(null);

        handling.cancel();

        assertThat(upstreamCancelled).isTrue();
        assertThat(cancelledHandlings).hasValue(2);
        assertThat(handling.running()).isZero();
        assertThat(started).hasSize(3);
        assertThat(failures).isEmpty();
    }

    /** Handlings of 0 to 9, at most {@code width} at once, ended by the test; cancellations counted. */
    private AtMostInFlight<Integer> cancellableHandlingAtMost(int width) {
        AtMostInFlight<Integer> handling = new AtMostInFlight<>(
                width,
                item -> Uni.createFrom()
                        .<Void>emitter(started::add)
                        .onCancellation()
                        .invoke(cancelledHandlings::incrementAndGet),
                failures::add);
        Multi.createFrom()
                .range(0, 10)
                .onCancellation()
                .invoke(() -> upstreamCancelled.set(true))
                .subscribe()
                .withSubscriber(handling);
        return handling;
    }
}
