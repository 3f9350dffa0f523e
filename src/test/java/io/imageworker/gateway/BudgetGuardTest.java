package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.Billing.CallCost;
import io.imageworker.testing.TestConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class BudgetGuardTest {

    private final AtomicLong now = new AtomicLong();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private BudgetGuard guard(String onExceeded) {
        return guard(onExceeded, "1m", now::get);
    }

    private BudgetGuard guard(String onExceeded, String window, java.util.function.LongSupplier clock) {
        return new BudgetGuard(
                TestConfig.worker(Map.of(
                                "image-worker.budget.max-calls",
                                "2",
                                "image-worker.budget.window",
                                window,
                                "image-worker.budget.price-per-call",
                                "20000",
                                "image-worker.budget.on-exceeded",
                                onExceeded))
                        .budget(),
                registry,
                clock,
                new io.imageworker.support.Pauses(clock));
    }

    private static boolean reserve(BudgetGuard guard) {
        return guard.reserve().await().atMost(Duration.ofSeconds(1));
    }

    @Test
    void failsOverTheCapAndAllowsAgainInTheNextWindow() {
        BudgetGuard guard = guard("fail");

        assertThat(reserve(guard)).isTrue();
        assertThat(reserve(guard)).isTrue();
        assertThat(reserve(guard)).isFalse();

        now.addAndGet(Duration.ofMinutes(1).toNanos());
        assertThat(reserve(guard)).isTrue();
    }

    @Test
    void aCallRefusedBeforeAnyWorkGivesItsPlaceBack() {
        BudgetGuard guard = guard("fail");
        reserve(guard);
        reserve(guard);

        guard.settle(CallCost.REFUSED);

        assertThat(reserve(guard)).isTrue();
        guard.settle(CallCost.BILLED);
        assertThat(reserve(guard)).isFalse();
    }

    @Test
    void reportsBilledSpendInQuotaUnits() {
        BudgetGuard guard = guard("fail");

        guard.settle(CallCost.BILLED);
        guard.settle(CallCost.BILLED);
        guard.settle(CallCost.UNKNOWN);

        assertThat(registry.counter("image_worker_spend_quota_units").count()).isEqualTo(40000);
        assertThat(registry.counter("image_worker_spend_unknown_quota_units").count())
                .isEqualTo(20000);
    }

    @Test
    void pausingWaitsForTheWindowInsteadOfRefusing() {
        BudgetGuard guard = guard("pause", "PT1S", System::nanoTime);
        reserve(guard);
        reserve(guard);
        long started = System.nanoTime();

        Boolean allowed = guard.reserve().await().atMost(Duration.ofSeconds(5));

        assertThat(allowed).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(Duration.ofMillis(500));
    }

    @Test
    void reportsTheRequestsItHoldsUntilTheWindowAllowsThem() {
        BudgetGuard guard = guard("pause", "PT1S", System::nanoTime);
        reserve(guard);
        reserve(guard);
        assertThat(held()).isZero();

        var third = guard.reserve().subscribeAsCompletionStage();

        await().atMost(Duration.ofMillis(900)).until(() -> held() == 1.0);
        assertThat(third.join()).isTrue();
        assertThat(held()).isZero();
    }

    private double held() {
        return registry.get("image_worker_budget_held_requests").gauge().value();
    }
}
