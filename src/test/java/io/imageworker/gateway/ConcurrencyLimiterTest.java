package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.imageworker.Lane;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ConcurrencyLimiterTest {

    /** Work that stays in flight until the test completes it. */
    private static final class Pending {
        final List<UniEmitter<? super String>> emitters = new ArrayList<>();
        final AtomicInteger started = new AtomicInteger();

        Uni<String> work() {
            return Uni.createFrom().emitter(emitter -> {
                started.incrementAndGet();
                emitters.add(emitter);
            });
        }
    }

    @Test
    void neverRunsMoreThanTheLimitAndStartsWaitersInArrivalOrder() {
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 2);
        Pending pending = new Pending();
        List<String> done = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            limiter.run(pending::work).subscribe().with(done::add);
        }

        assertThat(pending.started).hasValue(2);
        assertThat(limiter.inFlight()).isEqualTo(2);
        assertThat(limiter.waiting()).isEqualTo(3);

        pending.emitters.get(0).complete("a");
        assertThat(pending.started).hasValue(3);
        assertThat(limiter.inFlight()).isEqualTo(2);

        pending.emitters.get(1).fail(new RuntimeException("a failure frees its permit too"));
        pending.emitters.get(2).complete("c");
        pending.emitters.get(3).complete("d");
        pending.emitters.get(4).complete("e");

        assertThat(done).containsExactly("a", "c", "d", "e");
        assertThat(limiter.inFlight()).isZero();
        assertThat(limiter.waiting()).isZero();
    }

    @Test
    void halvesOnRateLimitDownToTheFloorAndGrowsBackOneStepPerLimitSuccesses() {
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(2, 16);

        limiter.onRateLimited();
        assertThat(limiter.limit()).isEqualTo(8);
        limiter.onRateLimited();
        limiter.onRateLimited();
        limiter.onRateLimited();
        assertThat(limiter.limit()).isEqualTo(2);

        limiter.onSuccess();
        assertThat(limiter.limit()).isEqualTo(2);
        limiter.onSuccess();
        assertThat(limiter.limit()).isEqualTo(3);
        for (int i = 0; i < 1000; i++) {
            limiter.onSuccess();
        }
        assertThat(limiter.limit()).isEqualTo(16);
    }

    @Test
    void aRaisedLimitStartsAWaiter() {
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 2);
        limiter.onRateLimited();
        Pending pending = new Pending();
        limiter.run(pending::work).subscribe().with(x -> {});
        limiter.run(pending::work).subscribe().with(x -> {});
        assertThat(pending.started).hasValue(1);

        limiter.onSuccess();

        assertThat(pending.started).hasValue(2);
    }

    @Test
    void refusesAFloorAboveTheCeiling() {
        assertThatThrownBy(() -> new ConcurrencyLimiter(3, 2)).isInstanceOf(IllegalArgumentException.class);
    }

    /** The lanes in the order their waiting calls got a permit, one released at a time. */
    private static List<Lane> grantOrder(double minShare, int normalWaiting, int priorityWaiting) {
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 1, minShare);
        Pending pending = new Pending();
        List<Lane> started = new ArrayList<>();
        limiter.run(pending::work).subscribe().with(x -> {});
        queue(limiter, Lane.NORMAL, normalWaiting, pending, started);
        queue(limiter, Lane.PRIORITY, priorityWaiting, pending, started);
        assertThat(limiter.waiting(Lane.NORMAL)).isEqualTo(normalWaiting);
        assertThat(limiter.waiting(Lane.PRIORITY)).isEqualTo(priorityWaiting);
        for (int i = 0; i < normalWaiting + priorityWaiting; i++) {
            pending.emitters.get(i).complete("done");
            assertThat(started).hasSize(i + 1);
        }
        return started;
    }

    /** {@code calls} calls of {@code lane}, each noting its lane in {@code started} when it gets its permit. */
    private static void queue(ConcurrencyLimiter limiter, Lane lane, int calls, Pending pending, List<Lane> started) {
        for (int i = 0; i < calls; i++) {
            limiter.run(lane, () -> {
                        started.add(lane);
                        return pending.work();
                    })
                    .subscribe()
                    .with(x -> {});
        }
    }

    private static long count(List<Lane> lanes, Lane lane) {
        return lanes.stream().filter(lane::equals).count();
    }

    @Test
    void givesAFreePermitToAPriorityCallBeforeNormalCallsThatWaitedLonger() {
        List<Lane> order = grantOrder(0.2, 3, 1);

        assertThat(order).containsExactly(Lane.PRIORITY, Lane.NORMAL, Lane.NORMAL, Lane.NORMAL);
    }

    @Test
    void keepsTheNormalLanesLeastShareOfThePermitsWhileBothLanesWait() {
        List<Lane> order = grantOrder(0.2, 40, 40);

        // While both wait (the first 50 permits: 40 priority, 10 normal), every fifth goes to the normal lane.
        List<Lane> whileBothWait = order.subList(0, 50);
        assertThat(count(whileBothWait, Lane.NORMAL)).isEqualTo(10);
        assertThat(whileBothWait.subList(0, 5))
                .containsExactly(Lane.PRIORITY, Lane.PRIORITY, Lane.PRIORITY, Lane.PRIORITY, Lane.NORMAL);
        // Then only the normal lane waits, and gets every permit.
        assertThat(order.subList(50, 80)).containsOnly(Lane.NORMAL);
    }

    @Test
    void withNoShareServesTheNormalLaneOnlyWhenNoPriorityCallWaits() {
        List<Lane> order = grantOrder(0, 5, 5);

        assertThat(order)
                .containsExactly(
                        Lane.PRIORITY,
                        Lane.PRIORITY,
                        Lane.PRIORITY,
                        Lane.PRIORITY,
                        Lane.PRIORITY,
                        Lane.NORMAL,
                        Lane.NORMAL,
                        Lane.NORMAL,
                        Lane.NORMAL,
                        Lane.NORMAL);
    }

    @Test
    void refusesAShareOutsideZeroToOne() {
        assertThatThrownBy(() -> new ConcurrencyLimiter(1, 2, 1.5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ConcurrencyLimiter(1, 2, -0.1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ConcurrencyLimiter(1, 2, Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPermitGivenToACallerThatCancelsAtThatMomentGoesBackToTheLimiter() throws Exception {
        // A cancel (contract v1.2) or the drain cuts a wait for a permit short; racing the permit's grant, it must
        // neither keep the permit nor leave it with no one.
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 1);
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 3_000; round++) {
                List<UniEmitter<? super String>> holder = new ArrayList<>();
                limiter.run(Lane.NORMAL, () -> Uni.createFrom().<String>emitter(holder::add))
                        .subscribe()
                        .with(ignored -> {});
                io.smallrye.mutiny.subscription.Cancellable waiting = limiter.run(
                                Lane.NORMAL, () -> Uni.createFrom().item("second"))
                        .subscribe()
                        .with(ignored -> {});
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                var ended = threads.submit(() -> {
                    go.await();
                    holder.get(0).complete("first");
                    return null;
                });
                var cancelled = threads.submit(() -> {
                    go.await();
                    waiting.cancel();
                    return null;
                });
                go.countDown();
                ended.get();
                cancelled.get();
                assertThat(limiter.inFlight())
                        .as("permits held after round %d", round)
                        .isZero();
                assertThat(limiter.waiting()).isZero();
            }
        } finally {
            threads.shutdownNow();
        }
    }
}
