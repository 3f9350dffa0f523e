package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.support.CpuWork;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.core.http.HttpServer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A gateway call's answer and the memory budget, on a real HTTP exchange (the simulator, or a server that stalls): a
 * call waiting for its answer holds its read window only; the answer's bytes are admitted when its headers come in,
 * the response paused until then; waiting for memory never runs the call's deadline down, while a gateway that does
 * not answer, or stops sending its body, still times out.
 */
class AnswerAdmissionTest {

    private static final long MIB = 1L << 20;
    private static final int IMAGE_BYTES = 2_000_000;

    private final Vertx vertx = Vertx.vertx();
    private final CpuWork cpu = new CpuWork(new WorkerThreads(), 1, 4);
    private final CallStages stages = CallStages.unregistered();
    private final AnswerSizes sizes = new AnswerSizes(64 * MIB);
    private GatewaySimulator gateway;
    private HttpServer stalling;

    @AfterEach
    void close() {
        if (gateway != null) {
            gateway.close();
        }
        if (stalling != null) {
            stalling.closeAndAwait();
        }
        vertx.closeAndAwait();
    }

    private GatewayClient client(Map<String, String> target, Duration timeout) {
        Map<String, String> settings = new HashMap<>(target);
        settings.put("image-worker.gateway.timeout", timeout.toMillis() + "ms");
        return new GatewayClient(
                vertx,
                TestConfig.worker(settings),
                TestConfig.settings(GatewaySettings.class, settings),
                new ObjectMapper(),
                cpu,
                sizes,
                stages);
    }

    private GatewayClient simulated(Latency latency, Duration timeout) {
        gateway = GatewaySimulator.start(SimulatorSettings.unlimited(latency).withImageBytes(IMAGE_BYTES));
        return client(gateway.workerSettings("gpt-image-2"), timeout);
    }

    private static UniAssertSubscriber<GatewayAnswer> send(GatewayClient client, MemoryBudget.Lease lease) {
        lease.reserve(AnswerSizes.WINDOW).await().indefinitely();
        return client.send(new GatewayRequest.Generate("a cat", "1024x1024", null), lease, null)
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create());
    }

    @Test
    void anAnswerWaitsPausedForMemoryLongerThanTheTimeoutAndIsReadNotFailed() {
        // The timeout leaves the simulator time to answer on a busy machine; the wait for memory is twice as long.
        GatewayClient client = simulated(Latency.none(), Duration.ofSeconds(2));
        // An answer admitted before holds almost the whole budget: the 2.7 MB answer (4.7 MB with its image) must wait.
        MemoryBudget budget = MemoryBudget.of(4 * MIB);
        MemoryBudget.Lease before = budget.lease(MemoryBudget.Kind.CALL);
        before.admit(3 * MIB).await().indefinitely();
        MemoryBudget.Lease lease = budget.lease(MemoryBudget.Kind.CALL);

        UniAssertSubscriber<GatewayAnswer> call = send(client, lease);

        await().atMost(Duration.ofSeconds(30))
                .failFast(() -> call.getItem() != null || call.getFailure() != null)
                .until(() -> stages.count(CallStages.Stage.ANSWER_WAITING_FOR_MEMORY) == 1);
        assertThat(budget.answersWaiting()).isEqualTo(1);
        assertThat(lease.bytes()).as("held while it waits: its read window").isEqualTo(AnswerSizes.WINDOW);
        // Twice the call's timeout, answered and paused: neither failed nor read.
        await().during(Duration.ofSeconds(4))
                .atMost(Duration.ofSeconds(30))
                .until(() -> call.getItem() == null && call.getFailure() == null);

        before.close();

        GatewayAnswer answer = call.awaitItem(Duration.ofSeconds(30)).getItem();
        assertThat(answer).isInstanceOf(GatewayAnswer.Image.class);
        assertThat(((GatewayAnswer.Image) answer).bytes()).hasSize(IMAGE_BYTES);
        assertThat(lease.bytes()).as("after reading: the image").isEqualTo(IMAGE_BYTES);
        assertThat(gateway.imageCalls()).hasSize(1);
        assertThat(stages.count(CallStages.Stage.ANSWER_WAITING_FOR_MEMORY)).isZero();
        assertThat(stages.count(CallStages.Stage.READING)).isZero();
        assertThat(stages.count(CallStages.Stage.AWAITING_ANSWER)).isZero();
    }

    @Test
    void aCallWaitingForItsAnswerCountsAsAwaitingAndHoldsItsReadWindowOnly() {
        GatewayClient client = simulated(Latency.fixed(Duration.ofSeconds(3)), Duration.ofSeconds(30));
        MemoryBudget budget = MemoryBudget.of(64 * MIB);
        MemoryBudget.Lease lease = budget.lease(MemoryBudget.Kind.CALL);

        UniAssertSubscriber<GatewayAnswer> call = send(client, lease);

        await().atMost(Duration.ofSeconds(30)).until(() -> gateway.imageCallsInFlight() == 1);
        assertThat(stages.count(CallStages.Stage.AWAITING_ANSWER)).isEqualTo(1);
        assertThat(budget.reservedForCalls()).isEqualTo(AnswerSizes.WINDOW);
        assertThat(call.awaitItem(Duration.ofSeconds(30)).getItem()).isInstanceOf(GatewayAnswer.Image.class);
        assertThat(budget.reservedForCalls())
                .as("answered: no longer a read window")
                .isZero();
        assertThat(stages.count(CallStages.Stage.AWAITING_ANSWER)).isZero();
    }

    @Test
    void aGatewayThatDoesNotAnswerStillTimesOut() {
        GatewayClient client = simulated(Latency.fixed(Duration.ofSeconds(20)), Duration.ofMillis(500));
        MemoryBudget.Lease lease = MemoryBudget.of(64 * MIB).lease(MemoryBudget.Kind.CALL);

        GatewayAnswer answer =
                send(client, lease).awaitItem(Duration.ofSeconds(15)).getItem();

        assertThat(answer).isInstanceOf(GatewayAnswer.Failure.class);
        assertThat(((GatewayAnswer.Failure) answer).failure().kind()).isEqualTo(FailureKind.TIMED_OUT);
        assertThat(stages.count(CallStages.Stage.AWAITING_ANSWER)).isZero();
        assertThat(lease.bytes()).isZero();
    }

    @Test
    void aBodyThatStopsComingTimesOutOnceAdmittedAndItsConnectionIsClosed() {
        // Headers and the start of a body, then nothing: a stalled answer, admitted at once.
        stalling = vertx.createHttpServer()
                .requestHandler(request -> request.response()
                        .putHeader("Content-Type", "application/json")
                        .putHeader("Content-Length", "100000")
                        .write("{\"created\":1,\"data\":[{\"b64_json\":\"iVBOR")
                        .subscribe()
                        .with(ignored -> {}, failure -> {}))
                .listenAndAwait(0, "127.0.0.1");
        GatewayClient client = client(
                Map.of("image-worker.gateway.base-url", "http://127.0.0.1:" + stalling.actualPort()),
                Duration.ofMillis(500));
        MemoryBudget.Lease lease = MemoryBudget.of(64 * MIB).lease(MemoryBudget.Kind.CALL);

        GatewayAnswer answer =
                send(client, lease).awaitItem(Duration.ofSeconds(15)).getItem();

        assertThat(answer).isInstanceOf(GatewayAnswer.Failure.class);
        assertThat(((GatewayAnswer.Failure) answer).failure().kind()).isEqualTo(FailureKind.TIMED_OUT);
        assertThat(stages.count(CallStages.Stage.READING)).isZero();
        assertThat(lease.bytes()).isZero();
    }
}
