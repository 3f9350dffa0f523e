package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.infra.Infrastructure;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The producer taken from the topic ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}, issue 49) on the real broker and
 * store: producers {@code a} and {@code b} write to their own topics ({@code <request-topic>.a}, {@code .b}, and the
 * priority lane's {@code image-request-priority.a}, {@code .b}), which the worker reads ({@code
 * IMAGE_WORKER_PRODUCERS}); producer b is hostile: it names a in {@code producer}. A request topic and a consumer group
 * of its own, and caps on both producers, so that what is charged to each can be read.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(ProducerIdentityTest.PerProducerTopics.class)
class ProducerIdentityTest extends PipelineTestSupport {

    static final String BASE = "image-request-tenants";
    static final String OF_A = BASE + ".a";
    static final String OF_B = BASE + ".b";

    /** The tests' servers, with the producer taken from the topic. */
    public static class PerProducerTopics extends WorkerTestResource {
        @Override
        public Map<String, String> start() {
            Map<String, String> config = new HashMap<>(super.start());
            Infrastructure.get().kafka().createTopics(OF_A, OF_B, PRIORITY_REQUESTS + ".a", PRIORITY_REQUESTS + ".b");
            config.put("image-worker.producer-identity", "topic");
            config.put("image-worker.producers", "a,b");
            config.put("image-worker.topic.request", BASE);
            config.put("image-worker.consumer-group", "producer-identity");
            config.put("image-worker.topic.budget", "image-worker-budget-" + UUID.randomUUID());
            config.put("image-worker.budget.per-producer", "a=1000/3650d,b=1000/3650d");
            return config;
        }
    }

    @Inject
    BudgetGuard budget;

    @BeforeEach
    void bothConsumed() {
        awaitConsumerOf(OF_A);
        awaitConsumerOf(OF_B);
    }

    @Test
    void aRequestNamingAnotherProducerIsRefusedWithoutACallOrACharge() {
        int usedByA = budget.used("a");
        String id = newId("impostor");

        kafka.send(OF_B, request(id, "\"producer\":\"a\""));

        JsonNode event = body(result(id));
        assertThat(event.path("error").path("code").asText()).isEqualTo("INVALID_REQUEST");
        assertThat(event.path("error").path("message").asText()).contains("'b'");
        assertThat(event.path("producer").asText())
                .as("the producer its topic authenticates")
                .isEqualTo("b");
        assertThat(callsFor(id)).isEmpty();
        assertThat(budget.used("a")).as("calls charged to a").isEqualTo(usedByA);
    }

    @Test
    void aRequestNamingItsOwnProducerOrNoneIsTheTopicsProducersInEitherLane() {
        int usedByB = budget.used("b");
        String named = newId("named");
        String unnamed = newId("unnamed");

        kafka.send(OF_B, request(named, "\"producer\":\"b\""));
        kafka.send(OF_B, request(unnamed, ""));
        String priority = newId("priority");
        kafka.send(WorkerTestResource.PRIORITY_REQUESTS + ".b", request(priority, ""));

        for (String id : new String[] {named, unnamed, priority}) {
            JsonNode event = body(result(id));
            assertThat(event.path("image").isObject()).as(id).isTrue();
            assertThat(event.path("producer").asText()).as(id).isEqualTo("b");
            assertThat(callsFor(id)).as(id).hasSize(1);
        }
        assertThat(budget.used("b")).as("calls charged to b").isEqualTo(usedByB + 3);
    }
}
