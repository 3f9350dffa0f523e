package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Per-producer budgets (contract v1.2) with {@code IMAGE_WORKER_BUDGET_ON_EXCEEDED=fail}: a request of a producer over
 * its cap ends {@code BUDGET_EXCEEDED} at once, with no call, naming the producer's cap; another producer's go on.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(ProducerBudgetFailTest.WithFailingProducerCap.class)
class ProducerBudgetFailTest extends PipelineTestSupport {

    static final String TOPIC = "image-request-producer-budget-fail";

    static final int CAP = 2;

    /** The tests' servers and settings, with a cap on producer a that fails requests over it. */
    public static class WithFailingProducerCap extends ProducerCapResource {
        public WithFailingProducerCap() {
            super(
                    TOPIC,
                    "producer-budget-fail",
                    Map.of(
                            "image-worker.budget.per-producer",
                            "a=" + CAP + "/3650d",
                            "image-worker.budget.on-exceeded",
                            "fail"));
        }
    }

    @Test
    void aRequestOfAProducerOverItsCapFailsBudgetExceededWithNoCallWhileAnothersComplete() {
        List<JsonNode> ofA = new ArrayList<>();
        for (int i = 0; i < CAP + 2; i++) {
            String id = newId("a");
            kafka.send(TOPIC, request(id, "\"producer\":\"a\""));
            // One at a time: which of them the cap refuses is then known.
            ofA.add(body(result(id)));
        }
        String ofB = newId("b");
        kafka.send(TOPIC, request(ofB, "\"producer\":\"b\""));

        assertThat(ofA.subList(0, CAP))
                .allSatisfy(event -> assertThat(event.path("image").isObject()).isTrue());
        assertThat(ofA.subList(CAP, CAP + 2)).allSatisfy(event -> {
            assertThat(event.path("error").path("code").asText()).isEqualTo("BUDGET_EXCEEDED");
            assertThat(event.path("error").path("message").asText()).contains("IMAGE_WORKER_BUDGET_PER_PRODUCER");
            assertThat(event.path("billing").path("calls").asInt()).isZero();
            assertThat(callsFor(event.path("requestId").asText())).isEmpty();
        });
        assertThat(body(result(ofB)).path("image").isObject()).isTrue();
    }
}
