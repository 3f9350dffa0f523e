package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
}
