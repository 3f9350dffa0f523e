package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.contract.Lane;
import io.imageworker.gateway.ConcurrencyLimiter;
import io.imageworker.messaging.intake.Admission;
import io.imageworker.spend.BudgetGuard;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Per-producer budgets (contract v1.2) on the real broker: producer A has a cap of a few calls, B none. A's backlog,
 * published first, takes A to its cap; A's other requests then wait (pause, the default) outside the places in
 * progress, in the read-ahead, while every one of B's, published after A's, completes. A request topic and a consumer
 * group of its own, so that A's requests left waiting reach no other test's worker. A third producer, with one call a
 * second, has a request wait for its slot past the end of the window it claimed its place in: it claims again, so that
 * its call counts in the window it leaves in.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(ProducerBudgetTest.WithProducerCap.class)
class ProducerBudgetTest extends PipelineTestSupport {

    static final String TOPIC = "image-request-producer-budget";

    /** A's cap, in one window of ten years (windows are aligned on the epoch: no boundary falls inside a run). */
    static final int CAP = 3;

    /** A's backlog: more than the worker's 8 places in progress and its cap together. */
    static final int OF_A = 16;

    static final int OF_B = 12;

    /** A producer with a cap of one call a second: windows that end while its requests wait for a slot. */
    static final String TICK = "tick";

    /** The tests' servers and settings, with a cap on producer a. */
    public static class WithProducerCap extends ProducerCapResource {
        public WithProducerCap() {
            super(
                    TOPIC,
                    "producer-budget",
                    Map.of("image-worker.budget.per-producer", "a=" + CAP + "/3650d," + TICK + "=1/1s"));
        }
    }

    @Inject
    Admission intake;

    @Inject
    ConcurrencyLimiter limiter;

    @Inject
    BudgetGuard budget;

    @Inject
    MeterRegistry registry;

    @Test
    void aCallWhoseWindowEndsWhileItWaitsForItsSlotClaimsAgainInTheWindowItLeavesIn() {
        awaitConsumerOf(TOPIC);
        double claimedAgainBefore = claimedAgain();
        // The four call slots taken by calls held at the simulator's gate; a request of the producer with one call a
        // second then claims its place at once and waits for a slot, until the window it claimed in has ended (the
        // windows are seconds aligned on the epoch: the second in which it was seen waiting has ended). Then the gate
        // opens (within the gateway timeout of 4 s, as calls of 3 s ended before) and it gets a slot.
        gateway.control().closeGate();
        List<String> blockers = sendRequests(TOPIC, 4, "blocker", "\"producer\":\"b\"");
        await().atMost(WITHIN).until(() -> gateway.imageCallsInFlight() == 4);
        String tick = newId(TICK);
        kafka.send(TOPIC, request(tick, "\"producer\":\"" + TICK + "\""));
        await().atMost(WITHIN).until(() -> limiter.waiting() == 1);
        long secondSeenWaiting = Instant.now().getEpochSecond();
        await().atMost(WITHIN).until(() -> Instant.now().getEpochSecond() > secondSeenWaiting);
        assertThat(callsFor(tick))
                .as("no call of the tick before the gate opens")
                .isEmpty();
        gateway.control().openGate();

        JsonNode event = body(result(tick));

        assertThat(event.path("image").isObject()).isTrue();
        assertThat(callsFor(tick)).hasSize(1);
        assertThat(claimedAgain() - claimedAgainBefore)
                .as("calls whose places were claimed again in the window they left in")
                .isGreaterThanOrEqualTo(1.0);
        blockers.forEach(id ->
                assertThat(body(result(id)).path("image").isObject()).as(id).isTrue());
    }

    @Test
    void aProducerOverItsCapWaitsOutsideThePlacesInProgressWhileAnotherCompletesAllItsRequests() {
        awaitConsumerOf(TOPIC);
        gateway.control().setLatency(Duration.ofMillis(300));
        List<String> ofA = sendRequests(TOPIC, OF_A, "a", "\"producer\":\"a\"");
        List<String> ofB = sendRequests(TOPIC, OF_B, "b", "\"producer\":\"b\"");

        ofB.forEach(id ->
                assertThat(body(result(id)).path("image").isObject()).as(id).isTrue());

        // A's requests beyond its cap are all held, none of them in a place in progress: B's are done, and the
        // places are free for any other producer.
        await().atMost(WITHIN).until(() -> budget.held("a") == OF_A - CAP && intake.inProgress(Lane.NORMAL) == 0);
        assertThat(ofA.stream().mapToInt(id -> callsFor(id).size()).sum())
                .as("gateway calls of A's requests")
                .isEqualTo(CAP);
        assertThat(budget.used("a")).isEqualTo(CAP);
        await().atMost(WITHIN)
                .alias("A's requests ended")
                .until(() ->
                        ofA.stream().mapToInt(id -> kafka.results(id).size()).sum() == CAP);
        // Most of them never went into progress: they wait in the read-ahead, having loaded nothing.
        assertThat(intake.waiting(Lane.NORMAL))
                .as("A's records waiting for a turn in the read-ahead")
                .isGreaterThanOrEqualTo(OF_A - CAP - 8);
    }

    private double claimedAgain() {
        return registry.get("image_worker_budget_claimed_again").counter().count();
    }
}
