package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.processing.Cancellations;
import io.imageworker.reference.ReferenceLoader;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.infra.Infrastructure;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
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
 * IMAGE_WORKER_PRODUCERS}); producer b is hostile: it names a in {@code producer}, sends a's ids, and sends an id a
 * will use before a does. No request of b reads, pre-empts or overwrites one of a's. A request topic and a consumer
 * group of its own, and caps on both producers, so that what is charged to each can be read.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(ProducerIdentityTest.PerProducerTopics.class)
class ProducerIdentityTest extends PipelineTestSupport {

    static final String BASE = "image-request-tenants";
    static final String OF_A = BASE + ".a";
    static final String OF_B = BASE + ".b";
    static final String PARKED = "image-request-parked-tenants";
    static final String CANCELS = "image-cancel-tenants";

    /** Each producer's status token. */
    static final Map<String, String> TOKENS = Map.of(
            "a", "a-status-" + UUID.randomUUID() + "-" + UUID.randomUUID(),
            "b", "b-status-" + UUID.randomUUID() + "-" + UUID.randomUUID());

    /** The operator's console token, which sees every producer's requests. */
    static final String CONSOLE_TOKEN = "console-" + UUID.randomUUID();

    /** The tests' servers, with the producer taken from the topic. */
    public static class PerProducerTopics extends WorkerTestResource {
        @Override
        public Map<String, String> start() {
            Map<String, String> config = new HashMap<>(super.start());
            Infrastructure.get()
                    .kafka()
                    .createTopics(
                            OF_A,
                            OF_B,
                            PRIORITY_REQUESTS + ".a",
                            PRIORITY_REQUESTS + ".b",
                            PARKED,
                            CANCELS + ".a",
                            CANCELS + ".b");
            // Each producer cancels on its own topic, <cancel topic>.<producer>.
            config.put("image-worker.topic.cancel", CANCELS);
            config.put("image-worker.producer-identity", "topic");
            config.put("image-worker.producers", "a,b");
            // Parking on, beyond a window of 4 offsets: a backlog is parked, and read back as its producer's.
            config.put("image-worker.topic.request-parked", PARKED);
            config.put("image-worker.offset-window", "4");
            config.put("image-worker.park-after", "4");
            config.put("image-worker.topic.request", BASE);
            config.put("image-worker.consumer-group", "producer-identity");
            config.put("image-worker.topic.budget", "image-worker-budget-" + UUID.randomUUID());
            config.put("image-worker.budget.per-producer", "a=1000/3650d,b=1000/3650d");
            config.put("image-worker.status.tokens", "a=" + TOKENS.get("a") + ",b=" + TOKENS.get("b"));
            // The console on, each producer admitted by its status token to its own requests (issue 52).
            config.put("image-worker.console.enabled", "true");
            config.put("image-worker.console.token", CONSOLE_TOKEN);
            config.put("image-worker.console.producer-access", "true");
            config.put("image-worker.console.actions", "cancel,submit");
            config.put("image-worker.console.max-entries", "500");
            return config;
        }
    }

    @Inject
    BudgetGuard budget;

    @Inject
    Cancellations cancellations;

    @Inject
    MeterRegistry registry;

    @Inject
    MemoryBudget memory;

    @TestHTTPResource("/")
    URI root;

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

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

    @Test
    void aRequestWithAnotherProducersIdGetsItsOwnResultAndLeavesTheOthersAlone() throws Exception {
        String id = newId("taken");
        kafka.send(OF_A, request(id, ""));
        JsonNode ofA = body(result(id));
        assertThat(ofA.path("image").path("key").asText()).isEqualTo("images/a/" + id + ".png");

        kafka.send(OF_B, request(id, ""));

        JsonNode ofB = nthResult(id, 2);
        assertThat(ofB.path("producer").asText()).isEqualTo("b");
        assertThat(ofB.path("image").path("key").asText())
                .as("b's own image, not a's recorded one")
                .isEqualTo("images/b/" + id + ".png");
        assertThat(callsFor(id)).as("a call for each producer's request").hasSize(2);
        // A's record is untouched: A's copy of its request is answered from it, with no call.
        kafka.send(OF_A, request(id, ""));
        JsonNode replayed = nthResult(id, 3);
        assertThat(replayed.path("producer").asText()).isEqualTo("a");
        assertThat(replayed.path("image")).isEqualTo(ofA.path("image"));
        assertThat(callsFor(id)).hasSize(2);
        // The status of an id is the status of the asking producer's request.
        assertThat(status(id, "a").path("image")).isEqualTo(ofA.path("image"));
        assertThat(status(id, "b").path("image")).isEqualTo(ofB.path("image"));
        HttpResponse<String> named = get("requests/" + id + "?producer=a", "a");
        assertThat(named.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(named.body()).path("image")).isEqualTo(ofA.path("image"));
    }

    @Test
    void aStatusQueryNeedsAProducersTokenAndSeesOnlyThatProducersRequests() throws Exception {
        String id = newId("watched");
        String neverSent = newId("never");
        // a's call waits at the simulator's gate: its request is held here, calling, while b asks (the gate opens
        // below, within the gateway timeout of 4 s, as a latency of 4 s ended it before).
        gateway.control().closeGate();
        kafka.send(OF_A, request(id, ""));
        await().atMost(WITHIN).until(() -> get("requests/" + id, "a").body().contains("\"calling\""));

        HttpResponse<String> held = get("requests/" + id, "b");
        HttpResponse<String> named = get("requests/" + id + "?producer=a", "b");
        HttpResponse<String> unknown = get("requests/" + neverSent, "b");
        assertThat(unknown.statusCode()).isEqualTo(404);
        for (HttpResponse<String> ofA : List.of(held, named)) {
            // a's request, held here, reads to b exactly as an id nobody sent.
            assertThat(ofA.statusCode()).isEqualTo(404);
            assertThat(ofA.body().replace(id, "<id>")).isEqualTo(unknown.body().replace(neverSent, "<id>"));
        }
        for (String credential : new String[] {null, "Bearer " + TOKENS.get("a").substring(1), "Basic a"}) {
            HttpResponse<String> refused = get("requests/" + id, null, credential);
            assertThat(refused.statusCode()).as(credential).isEqualTo(401);
            assertThat(refused.headers().firstValue("WWW-Authenticate"))
                    .hasValueSatisfying(value -> assertThat(value).startsWith("Bearer"));
            assertThat(refused.body()).doesNotContain(id).contains("UNAUTHENTICATED");
        }
        assertThat(get("requests/" + id, "a").body())
                .as("a's request still calling when b has asked")
                .contains("\"calling\"");
        gateway.control().openGate();

        JsonNode recorded = body(result(id));
        assertThat(status(id, "a").path("image")).isEqualTo(recorded.path("image"));
        HttpResponse<String> ended = get("requests/" + id, "b");
        assertThat(ended.statusCode()).isEqualTo(404);
        assertThat(ended.body().replace(id, "<id>")).isEqualTo(unknown.body().replace(neverSent, "<id>"));
    }

    @Test
    void anIdTakenFirstByAnotherProducerIsStillTheOwnersToUse() {
        String id = newId("future");
        kafka.send(OF_B, request(id, ""));
        JsonNode ofB = body(result(id));
        assertThat(ofB.path("producer").asText()).isEqualTo("b");

        kafka.send(OF_A, request(id, ""));

        JsonNode ofA = nthResult(id, 2);
        assertThat(ofA.path("producer").asText()).isEqualTo("a");
        assertThat(ofA.path("image").path("key").asText())
                .as("a's own image, not b's")
                .isEqualTo("images/a/" + id + ".png");
        assertThat(ofA.path("image").path("sha256").asText()).isNotBlank();
        assertThat(callsFor(id)).as("a call of its own for a's request").hasSize(2);
    }

    @Test
    void aReferenceToAnotherProducersImageReadsAsAMissingOneAndCostsNoCall() {
        String ofA = newId("a-image");
        kafka.send(OF_A, request(ofA, ""));
        String image = body(result(ofA)).path("image").path("uri").asText();
        assertThat(image).isEqualTo("s3://images/images/a/" + ofA + ".png");

        String stolen = newId("stolen");
        kafka.send(OF_B, EditPipelineTest.edit(stolen, "", EditPipelineTest.uri(image)));
        String missing = newId("missing");
        String nowhere = "s3://images/images/b/" + missing + ".png";
        kafka.send(OF_B, EditPipelineTest.edit(missing, "", EditPipelineTest.uri(nowhere)));
        String own = newId("own");
        kafka.send(OF_A, EditPipelineTest.edit(own, "", EditPipelineTest.uri(image)));

        JsonNode refused = body(result(stolen)).path("error");
        JsonNode absent = body(result(missing)).path("error");
        assertThat(refused.path("code").asText()).isEqualTo("INVALID_REFERENCE");
        assertThat(refused.path("code")).isEqualTo(absent.path("code"));
        assertThat(refused.path("retryable")).isEqualTo(absent.path("retryable"));
        // The same words as for a key that does not exist: nothing says a's image is there, or how large it is.
        assertThat(refused.path("message").asText().replace(image, "<uri>"))
                .isEqualTo(absent.path("message").asText().replace(nowhere, "<uri>"))
                .isEqualTo("references[0]: <uri> " + ReferenceLoader.UNREADABLE);
        assertThat(callsFor(stolen)).isEmpty();
        assertThat(callsFor(missing)).isEmpty();
        // Its owner may edit it.
        JsonNode edited = body(result(own));
        assertThat(edited.path("image").path("key").asText()).isEqualTo("images/a/" + own + ".png");
        assertThat(callsFor(own)).hasSize(1);
    }

    @Test
    void aCancelStopsOnlyTheRequestOfItsTopicsProducer() {
        String spared = newId("spared");
        String cancelled = newId("cancelled");
        // b cancels a's id on its own cancel topic, naming a; a cancels one of its own.
        kafka.send(CANCELS + ".b", spared, "{\"requestId\":\"" + spared + "\",\"producer\":\"a\"}", Map.of());
        kafka.send(CANCELS + ".a", cancelled, "{\"requestId\":\"" + cancelled + "\"}", Map.of());
        await().atMost(WITHIN)
                .until(() -> cancellations.isCancelled("b/" + spared) && cancellations.isCancelled("a/" + cancelled));

        kafka.send(OF_A, request(spared, ""));
        kafka.send(OF_A, request(cancelled, ""));

        JsonNode ofA = body(result(spared));
        assertThat(ofA.path("image").path("key").asText())
                .as("a's request, untouched by b's cancel")
                .isEqualTo("images/a/" + spared + ".png");
        assertThat(callsFor(spared)).hasSize(1);
        JsonNode stopped = body(result(cancelled));
        assertThat(stopped.path("error").path("code").asText()).isEqualTo("CANCELLED");
        assertThat(callsFor(cancelled)).isEmpty();
        assertThat(cancellations.isCancelled("a/" + spared)).isFalse();
        assertThat(cancellations.isCancelled(spared)).isFalse();
    }

    @Test
    void aParkedRequestIsStillItsTopicsProducers() {
        double parkedBefore = parked();
        gateway.control().setLatency(Duration.ofMillis(200));
        List<String> backlog = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            String id = newId("backlog");
            backlog.add(id);
            // Keyed by id, over every partition; b names a on its first requests, which is still refused once parked.
            kafka.send(OF_B, id, request(id, i < 4 ? "\"producer\":\"a\"" : ""), Map.of());
        }

        for (int i = 0; i < backlog.size(); i++) {
            String id = backlog.get(i);
            JsonNode event = body(result(id));
            assertThat(event.path("producer").asText()).as(id).isEqualTo("b");
            if (i < 4) {
                assertThat(event.path("error").path("code").asText()).as(id).isEqualTo("INVALID_REQUEST");
                assertThat(callsFor(id)).as(id).isEmpty();
            } else {
                assertThat(event.path("image").path("key").asText()).as(id).isEqualTo("images/b/" + id + ".png");
                assertThat(callsFor(id)).as(id).hasSize(1);
            }
        }
        assertThat(parked() - parkedBefore).as("requests parked").isPositive();
    }

    private double parked() {
        return registry.find("image_worker_requests_parked").counters().stream()
                .mapToDouble(Counter::count)
                .sum();
    }

    @Test
    void aProducersConsoleSeesAndCancelsItsOwnRequestsOnly() throws Exception {
        String onlyA = newId("console-a");
        String shared = newId("console-shared");
        String neverSent = newId("console-never");
        kafka.send(OF_A, request(onlyA, ""));
        kafka.send(OF_A, request(shared, ""));
        kafka.send(OF_B, request(shared, ""));
        for (String producer : new String[] {"a", "b"}) {
            await().atMost(WITHIN).until(() -> console("requests/" + shared + "?producer=" + producer, OPERATOR)
                    .body()
                    .contains("\"completed\""));
        }
        await().atMost(WITHIN).until(() -> console("requests/" + onlyA + "?producer=a", OPERATOR)
                .body()
                .contains("\"completed\""));
        String asB = "Bearer " + TOKENS.get("b");

        // The list: b's own requests, none of a's, and no count of a's.
        JsonNode list = JSON.readTree(console("requests", asB).body());
        assertThat(list.path("entries").findValuesAsText("producer"))
                .isNotEmpty()
                .containsOnly("b");
        assertThat(list.path("entries").findValuesAsText("requestId"))
                .contains(shared)
                .doesNotContain(onlyA);
        assertThat(list.path("producers").fieldNames()).toIterable().containsOnly("b");

        // The events from the start: b's, never one of a's, up to b's request of the shared id.
        List<String> streamed = eventsUntil(asB, "\"requestId\":\"" + shared + "\"");
        List<String> producers = new ArrayList<>();
        for (String data : streamed) {
            producers.addAll(JSON.readTree(data).findValuesAsText("producer"));
        }
        assertThat(producers).isNotEmpty().containsOnly("b");
        assertThat(String.join("", streamed)).doesNotContain(onlyA);

        // The detail and the images: a's request reads to b as one the console does not have, to the byte.
        HttpResponse<String> missing = console("requests/" + neverSent, asB);
        HttpResponse<String> missingImage = console("requests/" + neverSent + "/images/0", asB);
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(missingImage.statusCode()).isEqualTo(404);
        for (String query : new String[] {"", "?producer=a"}) {
            String path = onlyA + query;
            HttpResponse<String> detail = console("requests/" + path, asB);
            assertThat(detail.statusCode()).as(path).isEqualTo(404);
            assertThat(detail.body()).as(path).isEqualTo(missing.body());
            HttpResponse<String> image = console("requests/" + onlyA + "/images/0" + query, asB);
            assertThat(image.statusCode()).as(path).isEqualTo(404);
            assertThat(image.body()).as(path).isEqualTo(missingImage.body());
            assertThat(image.headers().map())
                    .as(path)
                    .isEqualTo(missingImage.headers().map());
        }
        assertThat(console("requests/" + onlyA + "/images/0", "Bearer " + TOKENS.get("a"))
                        .statusCode())
                .as("a's own image, to a")
                .isEqualTo(200);
        // Of the shared id, b gets its own request and its own image, never a's, even naming a.
        JsonNode own =
                JSON.readTree(console("requests/" + shared + "?producer=a", asB).body());
        assertThat(own.path("producer").asText()).isEqualTo("b");
        assertThat(own.path("images").get(0).path("key").asText()).isEqualTo("images/b/" + shared + ".png");
        HttpResponse<byte[]> imageOfB = consoleBytes("requests/" + shared + "/images/0?producer=a", asB);
        assertThat(imageOfB.statusCode()).isEqualTo(200);
        assertThat(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(imageOfB.body())))
                .isEqualTo(own.path("images").get(0).path("sha256").asText());

        // Cancel: naming a is refused; b's cancel of a's id goes to b's own topic and stops no request of a's.
        HttpResponse<String> namingA = act("requests/" + onlyA + "/cancel", asB, "{\"producer\":\"a\"}");
        assertThat(namingA.statusCode()).as(namingA.body()).isEqualTo(403);
        String queuedOfA = newId("console-queued");
        HttpResponse<String> cancel = act("requests/" + queuedOfA + "/cancel", asB, "{}");
        assertThat(cancel.statusCode()).as(cancel.body()).isEqualTo(202);
        await().atMost(WITHIN).until(() -> cancellations.isCancelled("b/" + queuedOfA));
        assertThat(cancellations.isCancelled("a/" + queuedOfA)).isFalse();
        // Submit: only as b.
        HttpResponse<String> asA = act("requests", asB, "{\"prompt\":\"a teapot\",\"producer\":\"a\"}");
        assertThat(asA.statusCode()).as(asA.body()).isEqualTo(403);

        // No credential, or a's token cut short: nothing.
        for (String credential : new String[] {null, "Bearer " + TOKENS.get("a").substring(1)}) {
            assertThat(console("requests", credential).statusCode()).isEqualTo(401);
        }
    }

    @Test
    void aProducersConsoleQueueHoldsItsOwnLinesOnly() throws Exception {
        String id = newId("console-calling");
        // a's call takes a while: it is calling here while the queue is looked at.
        gateway.control().setLatency(Duration.ofMillis(1500));
        kafka.send(OF_A, request(id, ""));
        await().atMost(WITHIN).until(() -> console("queue", OPERATOR).body().contains("a/" + id));

        JsonNode ofA =
                JSON.readTree(console("queue", "Bearer " + TOKENS.get("a")).body());
        JsonNode ofB =
                JSON.readTree(console("queue", "Bearer " + TOKENS.get("b")).body());
        assertThat(ofA.path("calling").toString()).contains("\"" + id + "\"");
        assertThat(ofB.toString()).doesNotContain(id);
        assertThat(ofB.path("spend").findValuesAsText("producer")).containsOnly("b");
        assertThat(ofB.path("lines").findValuesAsText("producer")).doesNotContain("a");
        assertThat(ofB.has("inProgress"))
                .as("the replica's count, which tells of a's")
                .isFalse();
        body(result(id));
    }

    @Test
    void aQueuedAnswerAndTheConsoleQueueTellAProducerNothingOfTheOthers() throws Exception {
        // One request of a called and ended first: a's own line has a pace here, and the replica a rate.
        String paced = newId("paced");
        kafka.send(OF_A, request(paced, ""));
        body(result(paced));
        // The memory budget held whole: calls wait in their slots, none leaves, every request stands in its line.
        MemoryBudget.Lease held = memory.lease(MemoryBudget.Kind.CALL);
        held.hold(memory.budget());
        List<String> ofB = sendRequests(OF_B, 3, "crowd", "");
        List<String> ofA = sendRequests(OF_A, 2, "paced", "");
        try {
            await().atMost(WITHIN)
                    .until(() -> ofA.stream().allMatch(id -> queueOf(id, "a").has("callsPerSecond"))
                            && ofB.stream().allMatch(id -> queueOf(id, "b").has("position")));
            for (String id : ofA) {
                JsonNode queue = queueOf(id, "a");
                // a's own rate, not the replica's, and no share of the producers waiting now (b's among them).
                assertThat(queue.has("share")).as("%s", queue).isFalse();
                assertThat(queue.path("basis").asText()).as("%s", queue).isEqualTo("OWN_CALLS");
                assertThat(queue.path("callExpectedInSeconds").asDouble()).isPositive();
            }
            assertThat(JSON.readTree(console("queue", OPERATOR).body()).has("callsPerSecond"))
                    .isTrue();
            JsonNode ofBsQueue =
                    JSON.readTree(console("queue", "Bearer " + TOKENS.get("b")).body());
            assertThat(ofBsQueue.has("callsPerSecond"))
                    .as("the replica's rate, which tells of a's calls: %s", ofBsQueue)
                    .isFalse();
            assertThat(ofBsQueue.path("lines").findValuesAsText("producer")).containsOnly("b");
        } finally {
            held.close();
        }
        for (String id : ofA) {
            assertThat(body(result(id)).path("image").isObject()).as(id).isTrue();
        }
        ofB.forEach(id -> body(result(id)));
    }

    /** The {@code queue} of {@code requestId}'s status answer to {@code producer} (missing when it has none). */
    private JsonNode queueOf(String requestId, String producer) {
        try {
            return JSON.readTree(get("requests/" + requestId, producer).body()).path("queue");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static final String OPERATOR = "Bearer " + CONSOLE_TOKEN;

    /** The console's API at {@code path}, with {@code authorization} (null: none). */
    private HttpResponse<String> console(String path, String authorization) throws IOException, InterruptedException {
        return get("console/api/" + path, null, authorization);
    }

    private HttpResponse<byte[]> consoleBytes(String path, String authorization)
            throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(root.resolve("console/api/" + path))
                        .header("Authorization", authorization)
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    private HttpResponse<String> act(String path, String authorization, String body)
            throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(root.resolve("console/api/" + path))
                        .header("Authorization", authorization)
                        .header("X-Console-Action", "1")
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The data of the console's events from the start, with {@code authorization}, until one holds {@code last}. */
    private List<String> eventsUntil(String authorization, String last) throws Exception {
        HttpResponse<java.util.stream.Stream<String>> stream = http.send(
                HttpRequest.newBuilder(root.resolve("console/api/events?after=0"))
                        .header("Authorization", authorization)
                        .build(),
                HttpResponse.BodyHandlers.ofLines());
        assertThat(stream.statusCode()).isEqualTo(200);
        try (java.util.stream.Stream<String> lines = stream.body()) {
            return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        List<String> data = new ArrayList<>();
                        java.util.Iterator<String> each = lines.iterator();
                        while (each.hasNext()) {
                            String line = each.next();
                            if (line.startsWith("data: ")) {
                                data.add(line.substring(6));
                                if (line.contains(last)) {
                                    return data;
                                }
                            }
                        }
                        return data;
                    })
                    .get(WITHIN.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /** The {@code n}th result of {@code requestId} (from 1), waiting for it: results of one id share a partition. */
    private static JsonNode nthResult(String requestId, int n) {
        await().atMost(WITHIN).until(() -> kafka.results(requestId).size() >= n);
        return body(kafka.results(requestId).get(n - 1));
    }

    /** {@code path} asked with {@code producer}'s token. */
    private HttpResponse<String> get(String path, String producer) throws IOException, InterruptedException {
        return get(path, producer, "Bearer " + TOKENS.get(producer));
    }

    private HttpResponse<String> get(String path, String producer, String authorization)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(root.resolve(path));
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode status(String requestId, String producer) throws IOException, InterruptedException {
        HttpResponse<String> answer = get("requests/" + requestId, producer);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        return JSON.readTree(answer.body());
    }
}
