package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.gateway.ConcurrencyLimiter;
import io.imageworker.processing.Cancellations;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.infra.Infrastructure;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Cancellation and the {@code producer} field (contract v1.2) on the real broker, with a worker that reads a cancel
 * topic of several partitions: a request cancelled before any of its calls left ends {@code CANCELLED} with no call,
 * whether the cancel comes while it waits for a slot, while it waits in Kafka, or before it is even sent; one whose
 * call is under way finishes and reports normally, with that one call. The worker has a spend cap, so that the last
 * test can have a request held by the spend guard and cancel it there.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(CancellationTest.WithCancelTopic.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CancellationTest extends PipelineTestSupport {

    /** The cancel topic of these tests. */
    static final String CANCELS = "image-cancel";

    /**
     * The spend guard's cap on this worker's calls, on a budget log of its own, in one window: room for every test, the
     * last one filling it to have a request held by the guard.
     */
    static final int MAX_CALLS = 24;

    /** The spend guard's window: no window boundary falls inside a run. */
    static final String WINDOW = "3650d";

    /** The tests' servers and settings, with cancellation and a spend cap on. */
    public static class WithCancelTopic extends WorkerTestResource {
        @Override
        public Map<String, String> start() {
            Map<String, String> config = super.start();
            Infrastructure.get().kafka().createTopics(CANCELS);
            config.put("image-worker.topic.cancel", CANCELS);
            config.put("image-worker.topic.budget", "image-worker-budget-" + UUID.randomUUID());
            config.put("image-worker.budget.max-calls", Integer.toString(MAX_CALLS));
            // Windows are aligned on the epoch: one of ten years (the current one runs from December 2019 to December
            // 2029) holds every test of a run, where a day's window would empty at midnight UTC in the middle of a run
            // and fail the last test.
            config.put("image-worker.budget.window", WINDOW);
            return config;
        }
    }

    @Inject
    ConcurrencyLimiter limiter;

    @Inject
    Cancellations cancellations;

    @Inject
    MeterRegistry registry;

    @Inject
    BudgetGuard budget;

    @Test
    void requestsCancelledWhileTheyWaitForASlotOrInKafkaMakeNoCallAndTheOthersComplete() {
        // The worker's consumer has its partitions (a worker just started may still be joining the group).
        String first = newId("warm");
        assertThat(ended(first, "").path("image").isObject()).isTrue();
        double cancelledBefore = cancelledCount();
        // The four slots stay taken while the cancels come: the first four calls wait at the simulator's gate, which
        // opens once every cancel is applied (within the gateway timeout of 4 s, as a latency of 3 s did before).
        gateway.control().closeGate();
        // Issue #21's done-when: cancelling 100 queued requests costs no call and gives 100 CANCELLED results.
        List<String> ids = sendRequests(106, "queued", "");
        // Four calls in flight, four more requests waiting for a slot, the rest read ahead or still in Kafka.
        await().atMost(WITHIN)
                .until(() -> gateway.imageCallsInFlight() == 4
                        && limiter.waiting() == 4
                        && ids.stream().filter(id -> !callsFor(id).isEmpty()).count() == 4);
        List<String> waiting = ids.stream().filter(id -> callsFor(id).isEmpty()).toList();
        assertThat(waiting).hasSize(102);
        List<String> cancelled = waiting.subList(0, 100);
        // All at once: a request waiting for a slot must hear of its cancel before the first call ends (one by one, a
        // hundred sends would take a round trip each).
        Map<String, String> cancels = new LinkedHashMap<>();
        cancelled.forEach(id -> cancels.put(id, "{\"requestId\":\"" + id + "\"}"));
        kafka.sendAll(CANCELS, cancels);
        await().atMost(WITHIN).until(() -> cancelled.stream().allMatch(cancellations::isCancelled));
        assertThat(ids.stream().filter(id -> !callsFor(id).isEmpty()).count())
                .as("calls made while the cancels came")
                .isEqualTo(4);
        gateway.control().openGate();

        for (String id : ids) {
            JsonNode event = body(result(id));
            if (cancelled.contains(id)) {
                assertThat(event.path("error").path("code").asText()).as(id).isEqualTo("CANCELLED");
                assertThat(event.path("attempts").asInt()).isZero();
                assertThat(event.path("billing").path("calls").asInt()).isZero();
                assertThat(callsFor(id)).as("calls of %s", id).isEmpty();
            } else {
                assertThat(event.path("image").isObject()).as(id).isTrue();
                assertThat(callsFor(id)).hasSize(1);
            }
        }
        assertThat(cancelledCount() - cancelledBefore).isEqualTo(100.0);
    }

    @Test
    void aCancelThatComesDuringTheCallLetsItFinishAndReportNormally() {
        gateway.control().setLatency(Duration.ofSeconds(2));
        String id = newId("calling");
        send(request(id, "\"producer\":\"edits\""));
        await().atMost(WITHIN).until(() -> callsFor(id).size() == 1);

        cancel(id);
        await().atMost(WITHIN).until(() -> cancellations.isCancelled(id));
        JsonNode event = body(result(id));

        assertThat(event.path("image").path("key").asText()).isEqualTo("images/" + id + ".png");
        assertThat(event.path("billing").path("calls").asInt()).isEqualTo(1);
        assertThat(event.path("producer").asText()).isEqualTo("edits");
        assertThat(callsFor(id)).hasSize(1);
    }

    @Test
    void aCancelThatComesBeforeItsRequestCancelsItWithNoCall() {
        String id = newId("early");
        cancel(id);
        await().atMost(WITHIN).until(() -> cancellations.isCancelled(id));

        JsonNode event = ended(id, "\"producer\":\"catalogue\",\"count\":2");

        assertThat(event.path("error").path("code").asText()).isEqualTo("CANCELLED");
        assertThat(event.path("error").path("retryable").asBoolean()).isFalse();
        assertThat(event.path("attempts").asInt()).isZero();
        assertThat(event.path("billing").path("calls").asInt()).isZero();
        assertThat(event.path("variants").path("delivered").asInt()).isZero();
        assertThat(event.path("producer").asText()).isEqualTo("catalogue");
        assertThat(callsFor(id)).isEmpty();
    }

    @Test
    void anInvalidProducerIsRefusedWithNoCallAndAValidOneIsEchoed() {
        String invalid = newId("badproducer");
        JsonNode refused = ended(invalid, "\"producer\":\"team a/b\"");

        assertThat(refused.path("error").path("code").asText()).isEqualTo("INVALID_REQUEST");
        assertThat(refused.path("error").path("message").asText()).contains("producer");
        assertThat(refused.has("producer")).isFalse();
        assertThat(callsFor(invalid)).isEmpty();

        String tooLong = newId("longproducer");
        assertThat(ended(tooLong, "\"producer\":\"" + "p".repeat(65) + "\"")
                        .path("error")
                        .path("code")
                        .asText())
                .isEqualTo("INVALID_REQUEST");
        assertThat(ended(newId("numberproducer"), "\"producer\":7")
                        .path("error")
                        .path("code")
                        .asText())
                .isEqualTo("INVALID_REQUEST");
        assertThat(callsFor(tooLong)).isEmpty();

        String named = newId("named");
        JsonNode completed = ended(named, "\"producer\":\"catalogue.v2_A-1\"");
        assertThat(completed.path("image").isObject()).isTrue();
        assertThat(completed.path("producer").asText()).isEqualTo("catalogue.v2_A-1");

        String unnamed = newId("unnamed");
        assertThat(ended(unnamed, "").has("producer")).isFalse();
    }

    /**
     * Issue 48: the cancels held are bounded (32 MiB), and beyond the bound they were forgotten oldest first whoever
     * sent them, so a storm of about 200,000 cancels of one producer forgot every earlier real cancel of every
     * producer, and those requests were called. Producer A's real cancel, then a storm of producer B past the bound (on
     * every partition, through the broker), then A's request: {@code CANCELLED}, no call. A's cancel written right
     * after the storm is applied too, as late as the storm before it in its partition takes to read: measured and
     * printed, for docs/events.md.
     */
    @Test
    @Order(Integer.MAX_VALUE - 1)
    void anotherProducersEarlierCancelSurvivesAStormOfOneProducerPastTheBound() throws Exception {
        String early = newId("before-storm");
        String late = newId("after-storm");
        kafka.send(CANCELS, early, "{\"requestId\":\"" + early + "\",\"producer\":\"a\"}", Map.of());
        await().atMost(WITHIN).until(() -> cancellations.isCancelled(early));
        double droppedBefore = droppedCount();
        int partitions = Infrastructure.get().kafka().partitions();
        // Past the bound: 32 MiB holds some 152,000 cancels of these ids (13 characters, 208 bytes beside them).
        int storm = 200_000;
        long sending = System.nanoTime();
        RecordMetadata lateSent;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        Infrastructure.get().kafka().bootstrapServers(),
                        ProducerConfig.LINGER_MS_CONFIG,
                        20,
                        ProducerConfig.BATCH_SIZE_CONFIG,
                        256 * 1024),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < storm; i++) {
                String id = String.format("storm-%07d", i);
                producer.send(new ProducerRecord<>(
                        CANCELS,
                        i % partitions,
                        bytes(id),
                        bytes("{\"requestId\":\"" + id + "\",\"producer\":\"b\"}")));
            }
            producer.flush();
            lateSent = producer.send(new ProducerRecord<>(
                            CANCELS, bytes(late), bytes("{\"requestId\":\"" + late + "\",\"producer\":\"a\"}")))
                    .get(30, TimeUnit.SECONDS);
        }
        long sent = System.nanoTime();
        await().atMost(Duration.ofMinutes(2)).until(() -> cancellations.isCancelled(late));
        long applied = System.nanoTime();
        System.out.printf(
                "Cancel storm: %d cancels of producer b sent in %d ms; a's cancel written after them (partition %d)"
                        + " applied %d ms after it was acknowledged; %.0f of b's forgotten, %d bytes held%n",
                storm,
                (sent - sending) / 1_000_000,
                lateSent.partition(),
                (applied - sent) / 1_000_000,
                droppedCount() - droppedBefore,
                cancellations.heldBytes());

        assertThat(droppedCount() - droppedBefore)
                .as("past the bound: b's own forgotten")
                .isPositive();
        assertThat(cancellations.heldBytes()).isLessThanOrEqualTo(Cancellations.MAX_HELD_BYTES);
        assertThat(cancellations.isCancelled(early))
                .as("a's earlier cancel survives b's storm")
                .isTrue();
        for (String id : List.of(early, late)) {
            JsonNode event = ended(id, "\"producer\":\"a\"");
            assertThat(event.path("error").path("code").asText()).as(id).isEqualTo("CANCELLED");
            assertThat(event.path("billing").path("calls").asInt()).isZero();
            assertThat(callsFor(id)).as("calls of %s", id).isEmpty();
        }
    }

    private double droppedCount() {
        return registry.get("image_worker_cancels_dropped").counter().count();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    @Order(Integer.MAX_VALUE)
    void aRequestHeldByTheSpendGuardIsCancelledWhileItWaitsAndTakesNoPlace() {
        // The window's budget filled, by requests that complete.
        List<String> filling = new ArrayList<>();
        for (int i = budget.used(); i < MAX_CALLS; i++) {
            String id = newId("filling");
            filling.add(id);
            send(request(id, ""));
        }
        filling.forEach(id ->
                assertThat(body(result(id)).path("image").isObject()).as(id).isTrue());
        String held = newId("held");
        send(request(held, ""));
        await().atMost(WITHIN).until(() -> budget.held() == 1);

        cancel(held);
        JsonNode event = body(result(held));

        assertThat(event.path("error").path("code").asText()).isEqualTo("CANCELLED");
        assertThat(event.path("billing").path("calls").asInt()).isZero();
        assertThat(callsFor(held)).isEmpty();
        assertThat(budget.held()).isZero();
        assertThat(budget.used()).isEqualTo(MAX_CALLS);
    }

    /** A cancel of {@code requestId}, keyed by it, as a producer sends one. */
    private static void cancel(String requestId) {
        kafka.send(CANCELS, requestId, "{\"requestId\":\"" + requestId + "\"}", Map.of());
    }

    private double cancelledCount() {
        return registry.get("image_worker_requests_cancelled").counter().count();
    }
}
