package io.imageworker.spend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.contract.Billing.CallCost;
import io.imageworker.spend.BudgetGuard.Reservation;
import io.imageworker.support.Pauses;
import io.imageworker.testing.TestConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
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
        return guard(
                Map.of("image-worker.budget.max-calls", "2", "image-worker.budget.on-exceeded", onExceeded), shared);
    }

    private BudgetGuard guard(Map<String, String> settings, BudgetLog shared) {
        Map<String, String> all = new HashMap<>(
                Map.of("image-worker.budget.window", "1m", "image-worker.budget.price-per-call", "20000"));
        all.putAll(settings);
        return new BudgetGuard(TestConfig.settings(BudgetSettings.class, all), registry, now::get, pauses, shared);
    }

    private static boolean reserve(BudgetGuard guard) {
        return reservation(guard).granted();
    }

    private static Reservation reservation(BudgetGuard guard) {
        return guard.reserve().await().atMost(PATIENCE);
    }

    private static Reservation reservation(BudgetGuard guard, String producer) {
        return guard.reserve(producer, BudgetGuard.Aside.NONE).await().atMost(PATIENCE);
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
        Reservation second = reservation(guard);

        guard.settle(second, CallCost.REFUSED);

        Reservation third = reservation(guard);
        assertThat(third.granted()).isTrue();
        guard.settle(third, CallCost.BILLED);
        assertThat(reserve(guard)).isFalse();
        guard.settle(second, CallCost.REFUSED);
        assertThat(reserve(guard)).as("a reservation gives its place back once").isFalse();
    }

    @Test
    void reportsBilledSpendInQuotaUnits() {
        BudgetGuard guard = guard("fail");

        guard.settle(reservation(guard), CallCost.BILLED);
        guard.settle(reservation(guard), CallCost.BILLED);
        guard.settle(Reservation.FREE, CallCost.UNKNOWN);

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

        CompletableFuture<Reservation> third = guard.reserve().subscribeAsCompletionStage();

        // Both at once: the guard's real timer (about 51 ms) looks again at the guard's clock, which has not moved, and
        // holds the request anew; between the two a check of one then the other could see the hold just ended.
        await().atMost(PATIENCE).until(() -> held() == 1.0 && pauses.active().equals(Set.of(Pauses.Reason.BUDGET)));
        now.addAndGet(50);
        assertThat(third.join().granted()).isTrue();
        assertThat(held()).isZero();
        assertThat(pauses.active()).isEmpty();
    }

    @Test
    void aLogThatDoesNotAnswerIsAskedAgainNotTakenForAFullWindow() {
        AtomicLong failures = new AtomicLong(2);
        BudgetLog flaky = new BudgetLog() {
            @Override
            public io.smallrye.mutiny.Uni<Boolean> claim(String scope, String claim, long window, int limit) {
                if (failures.getAndDecrement() > 0) {
                    return io.smallrye.mutiny.Uni.createFrom().failure(new IllegalStateException("broker away"));
                }
                return log.claim(scope, claim, window, limit);
            }

            @Override
            public void release(String scope, String secret, long window) {
                log.release(scope, secret, window);
            }

            @Override
            public int used(String scope, long window) {
                return log.used(scope, window);
            }

            @Override
            public java.util.Optional<String> stall() {
                return log.stall();
            }
        };

        Reservation placed = guard("fail", flaky).reserve().await().atMost(Duration.ofSeconds(5));

        assertThat(placed.granted()).isTrue();
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
        BudgetGuard guard = new BudgetGuard(TestConfig.settings(BudgetSettings.class), registry, now::get, pauses, log);

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
        new BudgetGuard(TestConfig.settings(BudgetSettings.class), registry, now::get, pauses, log);

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

    private BudgetGuard capped(String onExceeded, String maxCalls) {
        return guard(
                Map.of(
                        "image-worker.budget.max-calls", maxCalls,
                        "image-worker.budget.per-producer", "a=2/1m,slow=1/10m",
                        "image-worker.budget.on-exceeded", onExceeded),
                log);
    }

    @Test
    void aProducersCapRefusesThatProducerOnlyAndCountsInTheFleetsCapToo() {
        BudgetGuard guard = capped("fail", "10");

        assertThat(reservation(guard, "a").granted()).isTrue();
        assertThat(reservation(guard, "a").granted()).isTrue();
        Reservation refused = reservation(guard, "a");
        assertThat(refused.granted()).isFalse();
        assertThat(refused.refusal()).contains("IMAGE_WORKER_BUDGET_PER_PRODUCER");
        assertThat(reservation(guard, "b").granted())
                .as("another producer goes on")
                .isTrue();
        assertThat(reservation(guard, null).granted()).isTrue();

        assertThat(guard.used("a")).isEqualTo(2);
        assertThat(guard.used()).as("the fleet's count").isEqualTo(4);
        assertThat(guard.holds("a"))
                .as("with fail, its requests are not held: they fail")
                .isFalse();
        // The claims of a producer are entries of its own scope in the one shared log (the third was not written: the
        // window was known to be full).
        assertThat(log.entries().stream().filter(entry -> "a".equals(entry.scope())))
                .hasSize(2);
    }

    @Test
    void aProducersWindowHasItsOwnLength() {
        BudgetGuard guard = capped("fail", "10");
        assertThat(reservation(guard, "slow").granted()).isTrue();
        assertThat(reservation(guard, "slow").granted()).isFalse();

        now.addAndGet(WINDOW.toMillis());
        assertThat(reservation(guard, "slow").granted())
                .as("the fleet's window is over, not the producer's of 10 minutes")
                .isFalse();
        assertThat(reservation(guard, "a").granted()).isTrue();

        now.addAndGet(Duration.ofMinutes(10).toMillis());
        assertThat(reservation(guard, "slow").granted()).isTrue();
    }

    @Test
    void aCallThatCannotHaveBeenBilledGivesBackItsOwnPlacesInEachScopeAndNoOthers() {
        BudgetGuard guard = capped("fail", "10");
        Reservation ofA = reservation(guard, "a");
        Reservation ofB = reservation(guard, "b");
        Reservation secondOfA = reservation(guard, "a");

        // The oldest place is A's: giving back "a place" rather than B's own would take it from A.
        guard.settle(ofB, CallCost.REFUSED);
        assertThat(guard.used("a")).isEqualTo(2);
        assertThat(guard.used()).isEqualTo(2);

        guard.settle(ofA, CallCost.NOT_SENT);
        assertThat(guard.used("a")).isEqualTo(1);
        assertThat(guard.used()).isEqualTo(1);

        guard.settle(secondOfA, CallCost.BILLED);
        assertThat(guard.used("a")).as("a billed call keeps its places").isEqualTo(1);
        assertThat(reservation(guard, "a").granted()).isTrue();
        assertThat(reservation(guard, "a").granted()).isFalse();
    }

    @Test
    void aReservationWhoseWindowEndedBeforeTheCallLeftIsOutOfDateAndGivesBackWhatIsStillCurrent() {
        BudgetGuard guard = capped("fail", "10");
        Reservation ofSlow = reservation(guard, "slow");
        assertThat(guard.current(ofSlow)).isTrue();
        assertThat(guard.current(Reservation.FREE)).as("no place, no window").isTrue();

        assertThat(guard.outOfDate(ofSlow)).isFalse();
        // The fleet's window (a minute) ends while the call waits for its slot; the producer's (10 minutes) does not.
        now.addAndGet(WINDOW.toMillis());
        assertThat(guard.current(ofSlow)).isFalse();

        assertThat(guard.outOfDate(ofSlow)).isTrue();
        assertThat(registry.get("image_worker_budget_claimed_again").counter().count())
                .isEqualTo(1.0);
        assertThat(guard.used("slow"))
                .as("the producer's place, still in its window, given back")
                .isZero();
        Reservation again = reservation(guard, "slow");
        assertThat(again.granted()).isTrue();
        assertThat(guard.current(again)).isTrue();
        assertThat(guard.used())
                .as("counted in the fleet's window the call leaves in")
                .isEqualTo(1);
        assertThat(reservation(guard, "slow").granted())
                .as("the producer's cap of one holds in its window")
                .isFalse();
    }

    @Test
    void aProducersPlaceIsGivenBackWhenTheFleetsCapRefusesTheCall() {
        BudgetGuard guard = capped("fail", "2");
        assertThat(reservation(guard, "b").granted()).isTrue();
        assertThat(reservation(guard, "b").granted()).isTrue();

        Reservation refused = reservation(guard, "a");

        assertThat(refused.granted()).isFalse();
        assertThat(refused.refusal()).contains("IMAGE_WORKER_BUDGET_MAX_CALLS");
        assertThat(guard.used("a")).as("A's place, taken first, given back").isZero();
    }

    @Test
    void withPauseAProducerOverItsCapIsHeldAsideUntilItsNextWindowAndReportedSo() {
        BudgetGuard guard = capped("pause", "10");
        reservation(guard, "a");
        reservation(guard, "a");
        assertThat(guard.holds("a")).isTrue();
        assertThat(guard.holds("b")).isFalse();
        assertThat(guard.holds(null)).as("the default producer has no cap here").isFalse();
        now.addAndGet(WINDOW.toMillis() - 50);
        AtomicInteger aside = new AtomicInteger();
        AtomicInteger asideEnded = new AtomicInteger();
        BudgetGuard.Aside counting = new BudgetGuard.Aside() {
            @Override
            public <T> Uni<T> around(Uni<T> wait) {
                aside.incrementAndGet();
                return wait.onTermination().invoke(asideEnded::incrementAndGet);
            }
        };

        CompletableFuture<Reservation> third = guard.reserve("a", counting).subscribeAsCompletionStage();

        await().atMost(PATIENCE).until(() -> producerGauge("image_worker_budget_producer_held_requests", "a") == 1.0);
        assertThat(aside).hasValue(1);
        assertThat(asideEnded).hasValue(0);
        assertThat(pauses.active()).containsExactly(Pauses.Reason.BUDGET);
        assertThat(reservation(guard, "b").granted())
                .as("another producer goes on")
                .isTrue();
        assertThat(third).isNotDone();

        now.addAndGet(50);
        assertThat(third.join().granted()).isTrue();
        assertThat(asideEnded).hasValue(1);
        assertThat(producerGauge("image_worker_budget_producer_held_requests", "a"))
                .isZero();
        assertThat(pauses.active()).isEmpty();
        assertThat(guard.holds("a")).isFalse();
    }

    @Test
    void exportsEachCappedProducersCallsUsedItsCapAndItsHeldRequests() {
        BudgetGuard guard = capped("pause", "10");
        guard.countHeldInIntake(producer -> "a".equals(producer) ? 3 : 0);
        reservation(guard, "a");

        assertThat(producerGauge("image_worker_budget_producer_used_calls", "a"))
                .isEqualTo(1);
        assertThat(producerGauge("image_worker_budget_producer_max_calls", "a")).isEqualTo(2);
        assertThat(producerGauge("image_worker_budget_producer_max_calls", "slow"))
                .isEqualTo(1);
        assertThat(producerGauge("image_worker_budget_producer_held_requests", "a"))
                .as("the intake's records count only while the producer is over its cap")
                .isZero();
        reservation(guard, "a");
        assertThat(producerGauge("image_worker_budget_producer_held_requests", "a"))
                .isEqualTo(3);
        assertThat(registry.find("image_worker_budget_producer_used_calls").gauges())
                .as("one series per producer named, default and other")
                .hasSize(4);
        assertThat(producerGauge("image_worker_budget_producer_max_calls", "default"))
                .isNaN();
        assertThat(producerGauge("image_worker_budget_producer_max_calls", "other"))
                .isNaN();
        assertThat(producerGauge("image_worker_budget_producer_used_calls", "other"))
                .isZero();
        assertThat(BudgetGuard.FLEET_WIDE_GAUGES)
                .contains("image_worker_budget_producer_used_calls", "image_worker_budget_producer_max_calls");
    }

    @Test
    void producerCapsAloneStartTheSharedLogAndAreReported() {
        BudgetGuard guard = guard(Map.of("image-worker.budget.per-producer", "a=1/1m"), log);

        assertThat(reservation(guard, "a").granted()).isTrue();
        assertThat(reservation(guard, "b").granted()).isTrue();
        assertThat(guard.used()).as("no fleet cap: no fleet claim").isZero();
        log.stallWith("restarting");
        assertThat(guard.readerStall()).contains("restarting");
    }

    private double producerGauge(String name, String producer) {
        return registry.get(name).tag("producer", producer).gauge().value();
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
