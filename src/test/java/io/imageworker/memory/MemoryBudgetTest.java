package io.imageworker.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.imageworker.memory.MemoryBudget.Kind;
import io.imageworker.memory.MemoryBudget.Lease;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MemoryBudgetTest {

    private static final long MIB = 1L << 20;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    /** 100 MiB, 1 MiB of it kept for read windows (sixteen calls' worth). */
    private final MemoryBudget budget = new MemoryBudget(100 * MIB, MIB, registry);

    private static UniAssertSubscriber<Void> reserve(Lease lease, long bytes) {
        return lease.reserve(bytes).subscribe().withSubscriber(UniAssertSubscriber.create());
    }

    /** A reservation of {@code bytes} by a new lease of {@code kind}. */
    private UniAssertSubscriber<Void> reserve(Kind kind, long bytes) {
        return reserve(budget.lease(kind), bytes);
    }

    /** A new lease of {@code kind} that holds {@code bytes}, granted at once. */
    private Lease leaseHolding(Kind kind, long bytes) {
        Lease lease = budget.lease(kind);
        reserve(lease, bytes).assertCompleted();
        return lease;
    }

    @Test
    void grantsAtOnceWhatFits() {
        Lease lease = budget.lease(Kind.CALL);

        reserve(lease, 60 * MIB).assertCompleted();

        assertThat(lease.bytes()).isEqualTo(60 * MIB);
        assertThat(budget.held()).isEqualTo(60 * MIB);
    }

    @Test
    void waitsWhileFullAndGoesOnWhenBytesComeBack() {
        Lease first = leaseHolding(Kind.CALL, 70 * MIB);
        Lease second = budget.lease(Kind.CALL);

        UniAssertSubscriber<Void> waiting = reserve(second, 40 * MIB);

        waiting.assertNotTerminated();
        assertThat(budget.waiting()).isEqualTo(40 * MIB);
        assertThat(gauge("image_worker_memory_waiting")).isEqualTo(40.0 * MIB);
        first.resize(60 * MIB);
        waiting.assertCompleted();
        assertThat(budget.held()).isEqualTo(100 * MIB);
        assertThat(budget.waiting()).isZero();
        assertThat(registry.find("image_worker_memory_wait").timer().count()).isEqualTo(1);
    }

    @Test
    void servesWaitersInOrderOfArrival() {
        Lease holder = leaseHolding(Kind.CALL, 90 * MIB);
        UniAssertSubscriber<Void> large = reserve(Kind.CALL, 50 * MIB);
        UniAssertSubscriber<Void> small = reserve(Kind.CALL, 5 * MIB);

        // 10 MiB are free: the small one would fit, but the large one came first.
        small.assertNotTerminated();
        holder.close();
        large.assertCompleted();
        small.assertCompleted();
    }

    @Test
    void aNewReservationDoesNotOvertakeTheQueue() {
        Lease holder = leaseHolding(Kind.CALL, 90 * MIB);
        UniAssertSubscriber<Void> large = reserve(Kind.CALL, 50 * MIB);

        UniAssertSubscriber<Void> late = reserve(Kind.CALL, 1 * MIB);

        late.assertNotTerminated();
        large.assertNotTerminated();
    }

    @Test
    void anItemLargerThanTheWholeBudgetProceedsAloneOnly() {
        Lease holder = leaseHolding(Kind.CALL, 10 * MIB);
        Lease huge = budget.lease(Kind.CALL);

        UniAssertSubscriber<Void> waiting = reserve(huge, 300 * MIB);

        waiting.assertNotTerminated();
        holder.close();
        waiting.assertCompleted();
        assertThat(budget.held()).isEqualTo(300 * MIB);
        UniAssertSubscriber<Void> next = reserve(Kind.CALL, 1 * MIB);
        next.assertNotTerminated();
        huge.close();
        next.assertCompleted();
    }

    @Test
    void whenOnlyInputsAreHeldTheFirstCallGoesThroughRatherThanWaitForEver() {
        // Edits holding their references fill the budget; their requests end only after their calls.
        reserve(Kind.INPUTS, 60 * MIB).assertCompleted();
        reserve(Kind.INPUTS, 30 * MIB).assertCompleted();
        UniAssertSubscriber<Void> moreInputs = reserve(Kind.INPUTS, 40 * MIB);

        UniAssertSubscriber<Void> call = reserve(Kind.CALL, 40 * MIB);

        call.assertCompleted();
        moreInputs.assertNotTerminated();
        assertThat(budget.held()).isEqualTo(130 * MIB);
    }

    @Test
    void callsWaitWhileOtherCallsHoldBytesThatWillComeBack() {
        reserve(Kind.INPUTS, 50 * MIB).assertCompleted();
        Lease call = leaseHolding(Kind.CALL, 40 * MIB);

        UniAssertSubscriber<Void> next = reserve(Kind.CALL, 40 * MIB);

        next.assertNotTerminated();
        call.close();
        next.assertCompleted();
    }

    @Test
    void aCancelledWaiterLeavesTheQueueAndThoseBehindItGoOn() {
        Lease holder = leaseHolding(Kind.CALL, 80 * MIB);
        UniAssertSubscriber<Void> large = reserve(Kind.CALL, 50 * MIB);
        UniAssertSubscriber<Void> small = reserve(Kind.CALL, 10 * MIB);
        small.assertNotTerminated();

        large.cancel();

        small.assertCompleted();
        assertThat(budget.waiting()).isZero();
        assertThat(budget.waiters()).isZero();
    }

    @Test
    void closingAWaitingLeaseLeavesTheQueue() {
        Lease holder = leaseHolding(Kind.CALL, 80 * MIB);
        Lease waiter = budget.lease(Kind.CALL);
        reserve(waiter, 50 * MIB).assertNotTerminated();

        waiter.close();

        assertThat(budget.waiters()).isZero();
        assertThat(budget.held()).isEqualTo(80 * MIB);
        holder.close();
        assertThat(budget.held()).isZero();
    }

    @Test
    void bytesAlreadyArrivingAreHeldWithoutWaitingAndCountTowardsThePeak() {
        Lease call = leaseHolding(Kind.CALL, 90 * MIB);

        call.hold(130 * MIB);
        call.hold(20 * MIB);

        assertThat(call.bytes()).isEqualTo(130 * MIB);
        assertThat(budget.peak()).isEqualTo(130 * MIB);
        assertThat(gauge("image_worker_memory_held_peak")).isEqualTo(130.0 * MIB);
        call.resize(10 * MIB);
        assertThat(budget.held()).isEqualTo(10 * MIB);
        assertThat(gauge("image_worker_memory_held")).isEqualTo(10.0 * MIB);
        call.close();
        call.close();
        assertThat(budget.held()).isZero();
        assertThat(budget.peak()).isEqualTo(130 * MIB);
    }

    private static UniAssertSubscriber<Void> admit(Lease lease, long bytes) {
        return lease.admit(bytes).subscribe().withSubscriber(UniAssertSubscriber.create());
    }

    @Test
    void anAnswerOnTheWireGoesBeforeCallsBeyondTheirShare() {
        MemoryBudget small = new MemoryBudget(100 * MIB, 128 * 1024, registry);
        Lease reading = small.lease(Kind.CALL);
        admit(reading, 90 * MIB).assertCompleted();
        Lease inFlight = small.lease(Kind.CALL);
        reserve(inFlight, 64 * 1024).assertCompleted();
        reserve(small.lease(Kind.CALL), 64 * 1024).assertCompleted();
        UniAssertSubscriber<Void> answer = admit(inFlight, 30 * MIB);
        UniAssertSubscriber<Void> nextCall = reserve(small.lease(Kind.CALL), 64 * 1024);

        reading.resize(72 * MIB);

        // The share of windows is taken and an answer waits: the call waits, though it would fit.
        answer.assertNotTerminated();
        nextCall.assertNotTerminated();
        reading.resize(60 * MIB);
        answer.assertCompleted();
        nextCall.assertCompleted();
        assertThat(small.answersWaiting()).isZero();
        assertThat(small.held()).isLessThanOrEqualTo(100 * MIB);
    }

    @Test
    void callsTakeTheirShareOfReadWindowsWhileAnswersFillTheRest() {
        MemoryBudget shared = new MemoryBudget(100 * MIB, 10 * MIB, registry);
        admit(shared.lease(Kind.CALL), 50 * MIB).assertCompleted();
        admit(shared.lease(Kind.CALL), 40 * MIB).assertCompleted();
        UniAssertSubscriber<Void> answer = admit(shared.lease(Kind.CALL), 20 * MIB);

        UniAssertSubscriber<Void> window = reserve(shared.lease(Kind.CALL), 64 * 1024);

        answer.assertNotTerminated();
        window.assertCompleted();
        assertThat(shared.reservedForCalls()).isEqualTo(64 * 1024);
        assertThat(shared.held()).isLessThanOrEqualTo(100 * MIB);
    }

    @Test
    void theShareOfReadWindowsIsAWindowPerCallAtMostAQuarterOfTheBudget() {
        assertThat(MemoryBudget.windowShareOf(512 * MIB, 16)).isEqualTo(16 * MemoryBudget.READ_WINDOW);
        assertThat(MemoryBudget.windowShareOf(512 * MIB, 2_000)).isEqualTo(2_000 * MemoryBudget.READ_WINDOW);
        assertThat(MemoryBudget.windowShareOf(256 * MIB, 10_000)).isEqualTo(64 * MIB);
    }

    @Test
    void thousandsOfCallsInFlightHoldTheirReadWindowsAndAnswersAreReadAsTheBudgetAllows() {
        // 1,500 calls waiting for the gateway hold 64 KiB each (94 MiB of 100); their answers of 10 MiB each come in.
        List<Lease> calls = new ArrayList<>();
        for (int i = 0; i < 1_500; i++) {
            Lease call = budget.lease(Kind.CALL);
            reserve(call, 64 * 1024).assertCompleted();
            calls.add(call);
        }
        assertThat(budget.reservedForCalls()).isEqualTo(1_500 * 64 * 1024L);
        assertThat(gauge("image_worker_memory_reserved")).isEqualTo(1_500 * 64 * 1024.0);

        List<UniAssertSubscriber<Void>> answers = new ArrayList<>();
        for (Lease call : calls.subList(0, 3)) {
            answers.add(admit(call, 10 * MIB));
        }

        // Nothing admitted is being read: the first answer goes, over the budget, rather than wait for ever.
        answers.get(0).assertCompleted();
        answers.get(1).assertNotTerminated();
        answers.get(2).assertNotTerminated();
        assertThat(budget.answersWaiting()).isEqualTo(2);
        assertThat(budget.reservedForCalls()).isEqualTo(1_499 * 64 * 1024L);
        // The first answer read and stored: the next goes, one at a time while only read windows are held besides.
        calls.get(0).close();
        answers.get(1).assertCompleted();
        answers.get(2).assertNotTerminated();
        calls.get(1).close();
        answers.get(2).assertCompleted();
        assertThat(budget.held()).isLessThanOrEqualTo(100 * MIB + 10 * MIB);
    }

    @Test
    void anAnswerWaitsWhileAdmittedAnswersAreReadAndGoesWhenTheyGiveBytesBack() {
        Lease first = budget.lease(Kind.CALL);
        admit(first, 80 * MIB).assertCompleted();
        Lease second = budget.lease(Kind.CALL);
        reserve(second, 64 * 1024).assertCompleted();

        UniAssertSubscriber<Void> answer = admit(second, 30 * MIB);

        answer.assertNotTerminated();
        first.resize(10 * MIB);
        answer.assertCompleted();
        assertThat(budget.held()).isEqualTo(40 * MIB);
    }

    @Test
    void aCancelledAnswerLeavesItsQueue() {
        Lease first = budget.lease(Kind.CALL);
        admit(first, 75 * MIB).assertCompleted();
        UniAssertSubscriber<Void> answer = admit(budget.lease(Kind.CALL), 30 * MIB);
        UniAssertSubscriber<Void> inputs = reserve(Kind.INPUTS, 10 * MIB);
        inputs.assertNotTerminated();

        answer.cancel();

        inputs.assertCompleted();
        assertThat(budget.answersWaiting()).isZero();
        assertThat(budget.waiting()).isZero();
    }

    @Test
    void aClosedLeaseHoldsNothingWhateverItIsToldAfterwards() {
        Lease call = budget.lease(Kind.CALL);
        call.close();

        call.hold(5 * MIB);
        call.resize(5 * MIB);
        reserve(call, 5 * MIB).assertCompleted();

        assertThat(budget.held()).isZero();
    }

    @Test
    void theBudgetIsExportedWithItsUnit() {
        assertThat(gauge("image_worker_memory_budget")).isEqualTo(100.0 * MIB);
        assertThat(registry.find("image_worker_memory_budget").gauge().getId().getBaseUnit())
                .isEqualTo("bytes");
    }

    @Test
    void theSettingTakesBytesSizesAndShares() {
        long heap = 1024 * MIB;
        assertThat(MemoryBudget.budgetOf(Optional.empty(), heap)).isEqualTo(512 * MIB);
        assertThat(MemoryBudget.budgetOf(Optional.of(" "), heap)).isEqualTo(512 * MIB);
        assertThat(MemoryBudget.budgetOf(Optional.of("268435456"), heap)).isEqualTo(256 * MIB);
        assertThat(MemoryBudget.budgetOf(Optional.of("256Mi"), heap)).isEqualTo(256 * MIB);
        assertThat(MemoryBudget.budgetOf(Optional.of("256m"), heap)).isEqualTo(256 * MIB);
        assertThat(MemoryBudget.budgetOf(Optional.of("1G"), heap)).isEqualTo(1024 * MIB);
        assertThat(MemoryBudget.budgetOf(Optional.of("1.5Gi"), heap)).isEqualTo(1536 * MIB);
        assertThat(MemoryBudget.budgetOf(Optional.of("40%"), heap)).isEqualTo((long) (heap * 0.4));
    }

    @Test
    void aSettingThatIsNoPositiveSizeIsRefusedWithItsName() {
        for (String value : new String[] {"abc", "0", "-5M", "150%", "0%", "12 parsecs"}) {
            assertThatThrownBy(() -> MemoryBudget.budgetOf(Optional.of(value), 1024 * MIB))
                    .as(value)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("IMAGE_WORKER_MEMORY_BUDGET=" + value);
        }
    }

    private double gauge(String name) {
        return registry.find(name).gauge().value();
    }
}
