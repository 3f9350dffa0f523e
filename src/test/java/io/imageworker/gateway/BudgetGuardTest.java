package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.Billing.CallCost;
import io.imageworker.support.Pauses;
import io.imageworker.testing.TestConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The spend guard on an in-memory log and a clock of its own (epoch milliseconds; windows aligned on the epoch). */
class BudgetGuardTest {

    private static final Duration WINDOW = Duration.ofMinutes(1);
    /**
     * How long a reservation or a hold may take to show: the guard's clock is the test's, so this only bounds how
     * slowly the machine runs (a reservation that is held never completes, whatever the bound).
     */
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private final AtomicLong now = new AtomicLong(WINDOW.toMillis() * 1000);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Pauses pauses = new Pauses(() -> now.get() * 1_000_000);
    private final LocalBudgetLog log = new LocalBudgetLog();

    private BudgetGuard guard(String onExceeded) {
        return guard(onExceeded, log);
    }

    private BudgetGuard guard(String onExceeded, BudgetLog shared) {
        return new BudgetGuard(
                TestConfig.worker(Map.of(
                                "image-worker.budget.max-calls",
                                "2",
                                "image-worker.budget.window",
                                "1m",
                                "image-worker.budget.price-per-call",
                                "20000",
                                "image-worker.budget.on-exceeded",
                                onExceeded))
                        .budget(),
                registry,
                now::get,
                pauses,
                shared);
    }

    private static boolean reserve(BudgetGuard guard) {
        return guard.reserve().await().atMost(PATIENCE);
    }

    @Test
    void failsOverTheCapAndAllowsAgainInTheNextWindow() {
        BudgetGuard guard = guard("fail");

        assertThat(reserve(guard)).isTrue();
        assertThat(reserve(guard)).isTrue();
        assertThat(reserve(guard)).isFalse();

        now.addAndGet(WINDOW.toMillis());
        assertThat(reserve(guard)).isTrue();
    }

    @Test
    void windowsAreAlignedOnTheEpochSoThatEveryReplicaAgreesOnThem() {
        BudgetGuard guard = guard("fail");
        now.addAndGet(WINDOW.toMillis() - 10);
        reserve(guard);
        reserve(guard);
        assertThat(reserve(guard)).isFalse();

        now.addAndGet(10);
        assertThat(reserve(guard)).as("10 ms later, in the next window").isTrue();
    }

    @Test
    void replicasSharingTheLogShareTheCapAndARestartedOneFindsItsCount() {
        BudgetGuard first = guard("fail");
        BudgetGuard second = guard("fail");

        assertThat(reserve(first)).isTrue();
        assertThat(reserve(second)).isTrue();
        assertThat(reserve(first)).isFalse();
        assertThat(reserve(second)).isFalse();
        assertThat(first.used()).isEqualTo(2);

        BudgetGuard restarted = guard("fail");
        assertThat(reserve(restarted)).isFalse();
        assertThat(restarted.used()).isEqualTo(2);
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
        guard.settle(CallCost.UNKNOWN);
        assertThat(reserve(guard)).as("a call of unknown fate keeps its place").isFalse();
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
    void pausingHoldsTheRequestAsAPauseUntilTheNextWindow() {
        BudgetGuard guard = guard("pause");
        reserve(guard);
        reserve(guard);
        // 50 ms before the next window, on the guard's clock as on the timer's.
        now.addAndGet(WINDOW.toMillis() - 50);
        assertThat(held()).isZero();

        CompletableFuture<Boolean> third = guard.reserve().subscribeAsCompletionStage();

        await().atMost(PATIENCE).until(() -> held() == 1.0);
        assertThat(pauses.active()).containsExactly(Pauses.Reason.BUDGET);
        now.addAndGet(50);
        assertThat(third.join()).isTrue();
        assertThat(held()).isZero();
        assertThat(pauses.active()).isEmpty();
    }

    @Test
    void aLogThatDoesNotAnswerIsAskedAgainNotTakenForAFullWindow() {
        AtomicLong failures = new AtomicLong(2);
        BudgetLog flaky = new BudgetLog() {
            @Override
            public io.smallrye.mutiny.Uni<Boolean> claim(String claim, long window, int limit) {
                if (failures.getAndDecrement() > 0) {
                    return io.smallrye.mutiny.Uni.createFrom().failure(new IllegalStateException("broker away"));
                }
                return log.claim(claim, window, limit);
            }

            @Override
            public void release(String claim, long window) {
                log.release(claim, window);
            }

            @Override
            public int used(long window) {
                return log.used(window);
            }

            @Override
            public java.util.Optional<String> stall() {
                return log.stall();
            }
        };

        Boolean placed = guard("fail", flaky).reserve().await().atMost(Duration.ofSeconds(5));

        assertThat(placed).isTrue();
        assertThat(failures.get()).isNegative();
    }

    @Test
    void aStalledBudgetReaderIsReportedAndExportedAsAGaugeWhileItLasts() {
        BudgetGuard guard = guard("fail");
        assertThat(guard.readerStall()).isEmpty();
        assertThat(stalled()).isZero();

        log.stallWith("the reader failed and is restarting");
        assertThat(guard.readerStall()).contains("the reader failed and is restarting");
        assertThat(stalled()).isEqualTo(1);

        log.stallWith(null);
        assertThat(guard.readerStall()).isEmpty();
        assertThat(stalled()).isZero();
    }

    @Test
    void withoutACapNoReaderRunsAndNoneIsReportedStalled() {
        log.stallWith("not read");
        BudgetGuard guard = new BudgetGuard(TestConfig.worker().budget(), registry, now::get, pauses, log);

        assertThat(guard.readerStall()).isEmpty();
        assertThat(stalled()).isZero();
    }

    @Test
    void exportsTheFleetsCallsUsedAndItsCapAsGauges() {
        BudgetGuard guard = guard("fail");
        reserve(guard);

        assertThat(gauge(BudgetGuard.USED_CALLS)).isEqualTo(1);
        assertThat(gauge(BudgetGuard.MAX_CALLS)).isEqualTo(2);
        assertThat(registry.get(BudgetGuard.MAX_CALLS).gauge().getId().getDescription())
                .contains("whole fleet", "max");
    }

    @Test
    void withoutACapTheCapGaugeIsExportedAsNaNNotAsACapOfZero() {
        new BudgetGuard(TestConfig.worker().budget(), registry, now::get, pauses, log);

        assertThat(gauge(BudgetGuard.USED_CALLS)).isZero();
        assertThat(gauge(BudgetGuard.MAX_CALLS)).isNaN();
    }

    @Test
    void theCapGaugeHoldsItsGuardStrongly() {
        guard("fail");
        System.gc();

        assertThat(gauge(BudgetGuard.MAX_CALLS))
                .as("a weakly held guard would be collected: NaN")
                .isEqualTo(2);
    }

    private double gauge(String name) {
        return registry.get(name).gauge().value();
    }

    private double stalled() {
        return registry.get("image_worker_budget_reader_stalled").gauge().value();
    }

    private double held() {
        return registry.get("image_worker_budget_held_requests").gauge().value();
    }
}
