package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.Billing;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.ImageStarted;
import io.imageworker.contract.Lane;
import io.imageworker.contract.Operation;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.spend.BudgetLog;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.CpuWork;
import io.imageworker.support.Pauses;
import io.imageworker.support.RetrySettings;
import io.imageworker.support.Shutdown;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway loop of one request at its own seam: the gateway scripted (each call answered in turn by the next
 * answer of a list, as {@link GatewayClient#send} gives it), the policy, the guard, the limiter and the spend guard (no
 * cap) real. What a call's answer leads to: tried again after a back-off or at once, given up, or the image; and what
 * stops a call before it leaves: a rebalance handing the request over, a cancel, the drain.
 */
class GatewayCallsTest {

    /** How long a loop may take to end: its back-offs are of milliseconds, so this only bounds a slow machine. */
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private static final GatewayAnswer.Image IMAGE = new GatewayAnswer.Image(new byte[] {1, 2, 3}, null, 5);

    private final Vertx vertx = Vertx.vertx();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final CpuWork cpu = new CpuWork(new WorkerThreads(), 1, 4);
    private final Shutdown shutdown = new Shutdown();
    private final ScriptedGateway gateway = new ScriptedGateway();
    private final Handover places = new Handover();
    private final List<ImageStarted> told = new CopyOnWriteArrayList<>();
    private final MemoryBudget memory = new MemoryBudget(1L << 30, registry);
    private final ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 2);

    @AfterEach
    void close() {
        vertx.closeAndAwait();
    }

    /** The loop, with a listener that records every call told to it, and {@code more} listeners after it. */
    private GatewayCalls calls(CallListener... more) {
        Map<String, String> settings = Map.of(
                "image-worker.retry.max-rate-limited-attempts", "3",
                "image-worker.retry.unknown-outcome-retries", "1",
                "image-worker.retry.initial-backoff", "1ms",
                "image-worker.retry.max-backoff", "5ms",
                "image-worker.retry.request-deadline", "1m");
        WorkerConfig config = TestConfig.worker(settings);
        Pauses pauses = new Pauses(System::nanoTime);
        BudgetGuard budget = new BudgetGuard(
                TestConfig.settings(BudgetSettings.class, settings),
                registry,
                System::currentTimeMillis,
                pauses,
                NO_LOG);
        List<CallListener> listeners = new ArrayList<>();
        listeners.add(told::add);
        listeners.addAll(List.of(more));
        return new GatewayCalls(
                gateway,
                new GatewayGuard(
                        config, TestConfig.settings(GatewaySettings.class, settings), gateway, vertx, registry, pauses),
                budget,
                limiter,
                new RetryPolicy(TestConfig.settings(RetrySettings.class, settings)),
                new WorkerMetrics(registry),
                shutdown,
                new Tracing(OpenTelemetry.noop().getTracer("test")),
                new AnswerSizes(1_000_000),
                listeners,
                places,
                CallStages.unregistered());
    }

    /** Without a cap the spend guard never asks the log; a call that it did would fail the test. */
    private static final BudgetLog NO_LOG = new BudgetLog() {
        @Override
        public Uni<Boolean> claim(String scope, String claim, long window, int limit) {
            throw new AssertionError("no cap is set: nothing is claimed");
        }

        @Override
        public void release(String scope, String claim, long window) {
            throw new AssertionError("no cap is set: nothing is released");
        }

        @Override
        public int used(String scope, long window) {
            return 0;
        }

        @Override
        public Optional<String> stall() {
            return Optional.empty();
        }
    };

    private GatewayCalls.Result run(GatewayCalls calls, GatewayCalls.CallGate gate) {
        return runAsync(calls, gate).await().atMost(PATIENCE);
    }

    private Uni<GatewayCalls.Result> runAsync(GatewayCalls calls, GatewayCalls.CallGate gate) {
        ImageRequest request = new ImageRequest(
                "r-1",
                Operation.GENERATE,
                "a cat",
                null,
                null,
                List.of(),
                null,
                "images/",
                null,
                Map.of(),
                1,
                null,
                null);
        return calls.call(new GatewayCalls.Call(
                request,
                1,
                new GatewayRequest.Generate("a cat", "1024x1024", null),
                Lane.NORMAL,
                memory.lease(MemoryBudget.Kind.CALL),
                gate));
    }

    private GatewayCalls.Result run(GatewayCalls calls) {
        return run(calls, GatewayCalls.CallGate.OPEN);
    }

    private static GatewayAnswer failure(FailureKind kind) {
        return new GatewayAnswer.Failure(GatewayFailure.noAnswer(kind, kind.name()), 5);
    }

    /**
     * Issue 47: a slot is a call at the gateway. Once the answer is off the connection the gateway holds nothing of
     * it, so the slot goes back before the answer is read as JSON and base64 on the CPU pool, where it may wait its
     * turn behind thousands of others (which held half the slots empty at each wave of 30 s calls).
     */
    @Test
    void aCallGivesItsSlotBackOnceItsAnswerIsOffTheConnectionBeforeItIsRead() {
        CompletableFuture<GatewayAnswer> read = new CompletableFuture<>();
        gateway.reading = answer -> Uni.createFrom().completionStage(read);
        gateway.answer(IMAGE);

        CompletableFuture<GatewayCalls.Result> result =
                runAsync(calls(), GatewayCalls.CallGate.OPEN).subscribeAsCompletionStage();

        await().atMost(PATIENCE).until(() -> gateway.sent == 1);
        assertThat(limiter.inFlight())
                .as("slots held while the answer waits to be read")
                .isZero();
        assertThat(result).isNotDone();

        read.complete(IMAGE);
        assertThat(result.join().image()).isSameAs(IMAGE);
    }

    @Test
    void aCallOfUnknownFateIsTriedAgainAfterABackOffAndTheImageEndsTheLoop() {
        gateway.answer(failure(FailureKind.UPSTREAM), IMAGE);

        GatewayCalls.Result result = run(calls());

        assertThat(result.image()).isSameAs(IMAGE);
        assertThat(result.failure()).isNull();
        assertThat(result.attempts()).isEqualTo(2);
        assertThat(result.billing())
                .isEqualTo(Billing.NONE.plus(Billing.CallCost.UNKNOWN).plus(Billing.CallCost.BILLED));
        assertThat(gateway.sent).isEqualTo(2);
    }

    @Test
    void unknownOutcomesAreTriedAgainOnlyAsOftenAsThePolicyAllows() {
        gateway.answer(failure(FailureKind.UPSTREAM), failure(FailureKind.TIMED_OUT), IMAGE);

        GatewayCalls.Result result = run(calls());

        // One retry of an unknown outcome: the second one ends the request, and the image is never asked for.
        assertThat(result.image()).isNull();
        assertThat(result.failure().kind()).isEqualTo(FailureKind.TIMED_OUT);
        assertThat(result.attempts()).isEqualTo(2);
        assertThat(result.billing().unknown()).isEqualTo(2);
        assertThat(gateway.sent).isEqualTo(2);
    }

    @Test
    void aRefusedCallIsNotTriedAgain() {
        gateway.answer(failure(FailureKind.REFUSED), IMAGE);

        GatewayCalls.Result result = run(calls());

        assertThat(result.failure().kind()).isEqualTo(FailureKind.REFUSED);
        assertThat(result.attempts()).isEqualTo(1);
        assertThat(gateway.sent).isEqualTo(1);
    }

    @Test
    void aStaleConnectionIsSentAgainAtOnceAndIsNeitherAnAttemptNorACost() {
        gateway.answer(failure(FailureKind.STALE_CONNECTION), IMAGE);

        GatewayCalls.Result result = run(calls());

        assertThat(result.image()).isSameAs(IMAGE);
        assertThat(result.attempts()).isEqualTo(1);
        assertThat(result.billing()).isEqualTo(Billing.NONE.plus(Billing.CallCost.BILLED));
        assertThat(gateway.sent).isEqualTo(2);
    }

    @Test
    void aRateLimitedCallWaitsAtLeastTheDelayTheGatewayAskedFor() {
        Duration asked = Duration.ofMillis(300);
        gateway.answer(
                new GatewayAnswer.Failure(
                        new GatewayFailure(FailureKind.RATE_LIMITED, "429", 429, "", Optional.of(asked)), 5),
                IMAGE);

        GatewayCalls.Result result = run(calls());

        assertThat(result.image()).isSameAs(IMAGE);
        assertThat(gateway.sentAt.get(1) - gateway.sentAt.get(0)).isGreaterThanOrEqualTo(asked.toNanos());
    }

    @Test
    void noCallLeavesForARequestWhosePartitionIsBeingTakenAwayBeforeItsFirstCall() {
        gateway.answer(IMAGE);
        places.away.set(true);

        assertThatThrownBy(() -> run(calls())).isInstanceOf(AbandonedException.class);
        assertThat(gateway.sent).isZero();
        assertThat(told).isEmpty();
    }

    @Test
    void aCallThatHasItsSlotWhenThePartitionGoesDoesNotLeave() {
        gateway.answer(IMAGE);
        places.leaves.set(false);

        assertThatThrownBy(() -> run(calls())).isInstanceOf(AbandonedException.class);
        assertThat(gateway.sent).isZero();
    }

    @Test
    void aRequestHandedOverDuringItsBackOffMakesNoMoreCalls() {
        gateway.answer(failure(FailureKind.UPSTREAM), IMAGE);
        gateway.afterEachCall = () -> places.away.set(true);

        assertThatThrownBy(() -> run(calls())).isInstanceOf(AbandonedException.class);
        assertThat(gateway.sent).isEqualTo(1);
    }

    @Test
    void aRequestCancelledBeforeItsFirstCallEndsCancelledWithNoCall() {
        gateway.answer(IMAGE);

        GatewayCalls.Result result = run(calls(), gate(true, false));

        assertThat(result.failure().kind()).isEqualTo(FailureKind.CANCELLED);
        assertThat(result.attempts()).isZero();
        assertThat(gateway.sent).isZero();
    }

    @Test
    void aCancelSeenInTheCallsSlotStopsTheCallThere() {
        gateway.answer(IMAGE);

        GatewayCalls.Result result = run(calls(), gate(false, false));

        assertThat(result.failure().kind()).isEqualTo(FailureKind.CANCELLED);
        assertThat(gateway.sent).isZero();
        assertThat(told).isEmpty();
    }

    @Test
    void noCallLeavesOnceTheWorkerDrains() {
        gateway.answer(IMAGE);
        shutdown.startDraining();

        assertThatThrownBy(() -> run(calls())).isInstanceOf(AbandonedException.class);
        assertThat(gateway.sent).isZero();
    }

    @Test
    void everyCallThatLeavesIsToldToTheListenersAndAListenersFailureIsNotTheCalls() {
        gateway.answer(failure(FailureKind.UPSTREAM), IMAGE);

        GatewayCalls.Result result = run(calls(started -> {
            throw new IllegalStateException("a listener that fails");
        }));

        assertThat(result.image()).isSameAs(IMAGE);
        assertThat(told).extracting(ImageStarted::attempt).containsExactly(1, 2);
        assertThat(told).extracting(ImageStarted::requestId).containsOnly("r-1");
    }

    /** A gate whose request is {@code cancelled} (no call may leave), or is not but whose slot says {@code mayCall}. */
    private static GatewayCalls.CallGate gate(boolean cancelled, boolean mayCall) {
        return new GatewayCalls.CallGate() {
            @Override
            public boolean cancelled() {
                return cancelled;
            }

            @Override
            public boolean mayCall() {
                return mayCall;
            }

            @Override
            public <T> Uni<T> unlessCancelled(Uni<T> wait, Supplier<T> whenCancelled) {
                return wait;
            }
        };
    }

    /**
     * Where the request's partition is: here, or being taken away before the call waits ({@code away}), or once the
     * call has its slot ({@code leaves} false); each seen by its own check only.
     */
    private static final class Handover implements PlacesInProgress {
        final AtomicBoolean away = new AtomicBoolean();
        final AtomicBoolean leaves = new AtomicBoolean(true);

        @Override
        public BudgetGuard.Aside of(String requestId) {
            return BudgetGuard.Aside.NONE;
        }

        @Override
        public boolean waitsToCall(String requestId) {
            return !away.get();
        }

        @Override
        public boolean callLeaves(String requestId) {
            return leaves.get();
        }
    }

    /** The gateway: each call answered by the next answer given, and counted as sent. */
    private final class ScriptedGateway extends GatewayClient {
        private final Deque<GatewayAnswer> answers = new ConcurrentLinkedDeque<>();
        final List<Long> sentAt = new CopyOnWriteArrayList<>();
        volatile int sent;
        volatile Runnable afterEachCall = () -> {};
        /** How each answer is read once its exchange is over: at once, but where a test says otherwise. */
        volatile Function<GatewayAnswer, Uni<GatewayAnswer>> reading =
                answer -> Uni.createFrom().item(answer);

        ScriptedGateway() {
            super(
                    vertx,
                    TestConfig.worker(),
                    TestConfig.settings(GatewaySettings.class),
                    new ObjectMapper(),
                    cpu,
                    new AnswerSizes(1_000_000),
                    CallStages.unregistered());
        }

        void answer(GatewayAnswer... next) {
            answers.addAll(List.of(next));
        }

        @Override
        public Uni<Exchanged> exchange(GatewayRequest request, MemoryBudget.Lease lease, String traceparent) {
            sentAt.add(System.nanoTime());
            sent++;
            GatewayAnswer answer = answers.remove();
            afterEachCall.run();
            return Uni.createFrom().item(new Exchanged(() -> reading.apply(answer), lease));
        }
    }
}
