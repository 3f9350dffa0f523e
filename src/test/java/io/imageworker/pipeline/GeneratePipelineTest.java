package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.image.ImageInspector;
import io.imageworker.testing.KafkaTestClient;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.Fault;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.ResponseForm;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.inject.Inject;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.S3AsyncClient;

/** Text to image, end to end: the real broker, the real store, the gateway simulator. */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class GeneratePipelineTest extends PipelineTestSupport {

    @Inject
    S3AsyncClient s3;

    private byte[] object(String bucket, String key) {
        return s3.getObject(get -> get.bucket(bucket).key(key), AsyncResponseTransformer.toBytes())
                .join()
                .asByteArray();
    }

    @Test
    void storesTheImageAndPublishesACompletedCloudEvent() {
        String id = newId("gen");
        String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        sendInTrace(
                "key-" + id,
                request(id, "\"size\":\"16:9\",\"quality\":\"high\",\"metadata\":{\"sku\":\"A-17\"}"),
                traceId,
                "00f067aa0ba902b7");

        ConsumerRecord<byte[], byte[]> record = result(id);
        JsonNode event = body(record);

        assertThat(record.topic()).isEqualTo("image-completed");
        assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo("key-" + id);
        assertThat(KafkaTestClient.header(record, "ce_specversion")).isEqualTo("1.0");
        assertThat(KafkaTestClient.header(record, "ce_type")).isEqualTo("image.completed");
        assertThat(KafkaTestClient.header(record, "ce_subject")).isEqualTo(id);
        assertThat(KafkaTestClient.header(record, "ce_id")).isNotBlank();
        assertThat(KafkaTestClient.header(record, "content-type")).isEqualTo("application/json");
        assertThat(KafkaTestClient.header(record, "traceparent"))
                .startsWith("00-" + traceId + "-")
                .endsWith("-01");
        // Traces are off by default: no span of the worker is recorded, so none is named to the gateway (a recorded
        // span of an SDK without an exporter was, before: a trace that went nowhere, at the cost of recording it).
        assertThat(callsFor(id))
                .singleElement()
                .extracting(RecordedCall::traceparent)
                .isNull();

        assertThat(event.path("requestId").asText()).isEqualTo(id);
        assertThat(event.path("operation").asText()).isEqualTo("generate");
        assertThat(event.path("image").path("bucket").asText()).isEqualTo(WorkerTestResource.BUCKET);
        assertThat(event.path("image").path("key").asText()).isEqualTo("images/" + id + ".png");
        assertThat(event.path("image").path("uri").asText()).isEqualTo("s3://images/images/" + id + ".png");
        assertThat(event.path("image").has("url")).isFalse();
        assertThat(event.path("image").path("contentType").asText()).isEqualTo("image/png");
        assertThat(event.path("image").path("width").asInt()).isEqualTo(1536);
        assertThat(event.path("image").path("height").asInt()).isEqualTo(864);
        assertThat(event.path("size").path("requested").asText()).isEqualTo("16:9");
        assertThat(event.path("size").path("sent").asText()).isEqualTo("1536x864");
        assertThat(event.path("size").path("actual").asText()).isEqualTo("1536x864");
        assertThat(event.path("size").path("matched").asBoolean()).isTrue();
        assertThat(event.path("attempts").asInt()).isEqualTo(1);
        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":1,\"billed\":1,\"unknown\":0}");
        assertThat(event.path("timings").path("gatewayMs").asLong()).isPositive();
        assertThat(Instant.parse(event.path("timings").path("completedAt").asText()))
                .isAfterOrEqualTo(
                        Instant.parse(event.path("timings").path("receivedAt").asText()));
        assertThat(event.path("metadata").toString()).isEqualTo("{\"sku\":\"A-17\"}");

        byte[] stored = object(WorkerTestResource.BUCKET, "images/" + id + ".png");
        assertThat(ImageInspector.sha256Hex(stored))
                .isEqualTo(event.path("image").path("sha256").asText());
        assertThat((long) stored.length)
                .isEqualTo(event.path("image").path("bytes").asLong());
        var head = s3.headObject(h -> h.bucket(WorkerTestResource.BUCKET).key("images/" + id + ".png"))
                .join();
        assertThat(head.contentType()).isEqualTo("image/png");
        assertThat(head.metadata())
                .containsEntry("request-id", id)
                .containsEntry("sha256", event.path("image").path("sha256").asText());

        RecordedCall call = callsFor(id).get(0);
        assertSentFields(call, "1536x864", "high");
    }

    /**
     * Mutiny's callbacks run as given: no context snapshot is taken around each operator's function (see the
     * {@code removed-resources} line of application.properties), while the request above still completed.
     */
    @Test
    void mutinyCallbacksAreNotWrappedWithCapturedContexts() {
        Function<String, String> callback = text -> text;
        assertThat(Infrastructure.decorate(callback)).isSameAs(callback);
    }

    @Test
    void aRequestWithoutKeyGetsItsRequestIdAsKey() {
        String id = newId("nokey");
        send(request(id, ""));

        assertThat(new String(result(id).key(), StandardCharsets.UTF_8)).isEqualTo(id);
    }

    @Test
    void downloadsAnImageReturnedAsUrlAndNeverPassesTheUrlOn() {
        gateway.control().setResponseForm(ResponseForm.URL);
        String id = newId("url");
        JsonNode event = ended(id, "");

        assertThat(event.path("image").path("key").asText()).isEqualTo("images/" + id + ".png");
        assertThat(event.toString()).doesNotContain(gateway.filesBaseUrl());
        assertThat(gateway.downloads()).isNotEmpty();
    }

    /** A returned URL whose download fails, and the code the request then ends with. */
    static Stream<Arguments> urlsThatCannotBeDownloaded() {
        return Stream.of(
                Arguments.of(Named.of("has expired", Fault.expiredUrl()), "INVALID_OUTPUT"),
                Arguments.of(Named.of("hangs", Fault.hangingUrl()), "TIMEOUT"));
    }

    @ParameterizedTest(name = "the returned URL {0}: {1}")
    @MethodSource("urlsThatCannotBeDownloaded")
    void failsWithoutRetryWhenTheReturnedUrlCannotBeDownloaded(Fault fault, String code) {
        gateway.control().setResponseForm(ResponseForm.URL).injectFault(fault);
        String id = newId("badurl");
        JsonNode event = ended(id, "");

        assertThat(event.path("error").path("code").asText()).isEqualTo(code);
        assertThat(event.path("billing").path("billed").asInt()).isEqualTo(1);
        assertThat(callsFor(id)).hasSize(1);
    }

    /**
     * A gateway that answers with a URL inside the worker's network (the cloud metadata endpoint, a private address,
     * the worker's own machine, plain http) gets no download: the request ends INVALID_OUTPUT with a reason naming
     * the host and why, without a retry. The simulator's own file host is allowed in these tests by name
     * ({@code image-worker.gateway.url-internal-hosts=127.0.0.1}); {@code localhost} is not on that list.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "https://169.254.169.254/latest/meta-data/iam/security-credentials/ | host '169.254.169.254' has"
                        + " address 169.254.169.254, which is link-local (cloud metadata)",
                "https://10.0.0.5/files/a.png | host '10.0.0.5' has address 10.0.0.5, which is private",
                "https://localhost:FILES/files/a.png | which is loopback",
                "http://localhost:FILES/files/a.png | only https:// answer URLs are fetched, not http:// (host"
                        + " 'localhost' is not in IMAGE_WORKER_GATEWAY_URL_INTERNAL_HOSTS)",
            })
    void failsWithInvalidOutputWithoutDownloadingWhenTheReturnedUrlIsInternal(String url, String reason) {
        String filesPort = Integer.toString(URI.create(gateway.filesBaseUrl()).getPort());
        gateway.control().injectFault(Fault.foreignUrl(url.replace("FILES", filesPort)));
        String id = newId("internalurl");
        JsonNode event = ended(id, "");

        assertThat(event.path("error").path("code").asText()).isEqualTo("INVALID_OUTPUT");
        assertThat(event.path("error").path("message").asText())
                .contains("the gateway's image url was refused: ")
                .contains(reason);
        assertThat(event.path("billing").path("billed").asInt()).isEqualTo(1);
        assertThat(callsFor(id)).hasSize(1);
        assertThat(gateway.downloads()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({
        "'', 1024x1024",
        "auto, 1024x1024",
        "9:16, 864x1536",
        "32:18, 1536x864",
        "2048x1152, 2048x1152",
        "1011x3500, 1008x3024",
        "100x100, 816x816"
    })
    void alwaysSendsAnExplicitValidPixelSize(String requested, String sent) {
        String id = newId("size");
        JsonNode event = ended(id, requested.isEmpty() ? "" : "\"size\":\"" + requested + "\"");

        assertThat(event.path("size").path("sent").asText()).isEqualTo(sent);
        assertThat(callsFor(id)).singleElement().satisfies(call -> assertThat(call.textFields())
                .containsEntry("size", sent));
    }

    @ParameterizedTest
    @ValueSource(strings = {"big", "0x0", "-5x10", "16:0"})
    void refusesAnUnusableSizeWithoutAGatewayCall(String size) {
        String id = newId("badsize");
        JsonNode event = ended(id, "\"size\":\"" + size + "\"");

        assertThat(event.path("error").path("code").asText()).isEqualTo("INVALID_REQUEST");
        assertThat(event.path("error").path("message").asText()).contains("size");
        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":0,\"billed\":0,\"unknown\":0}");
        assertThat(callsFor(id)).isEmpty();
    }

    @Test
    void refusesABrokenRequestNamingTheFieldWithoutACall() {
        String id = newId("noprompt");
        send("{\"requestId\":\"" + id + "\",\"quality\":\"ultra\",\"prompt\":\"x " + id + "\"}");

        JsonNode event = body(result(id));

        assertThat(event.path("error").path("code").asText()).isEqualTo("INVALID_REQUEST");
        assertThat(event.path("error").path("message").asText()).startsWith("quality");
        assertThat(event.path("error").path("retryable").asBoolean()).isFalse();
        assertThat(callsFor(id)).isEmpty();
    }

    @Test
    void expiresARequestWhoseDeadlinePassedWithoutACall() {
        String id = newId("late");
        send(request(id, "\"deadline\":\"2020-01-01T00:00:00Z\""));

        assertThat(body(result(id)).path("error").path("code").asText()).isEqualTo("EXPIRED");
        assertThat(callsFor(id)).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({"not json at all", "{\"prompt\":\"no request id\"}", "[1,2,3]"})
    void sendsAnUnreadableRecordToTheDlqByteForByte(String value) {
        String marker = newId("dlq");
        kafka.send(WorkerTestResource.REQUESTS, marker, value, Map.of("origin", marker));

        // Other test classes leave dead letters on the same topic, some without a key.
        Predicate<ConsumerRecord<byte[], byte[]>> ours =
                r -> r.key() != null && marker.equals(new String(r.key(), StandardCharsets.UTF_8));
        await().atMost(WITHIN).until(() -> kafka.deadLetters().stream().anyMatch(ours));
        ConsumerRecord<byte[], byte[]> dead =
                kafka.deadLetters().stream().filter(ours).findFirst().orElseThrow();

        assertThat(dead.value()).isEqualTo(value.getBytes(StandardCharsets.UTF_8));
        assertThat(KafkaTestClient.header(dead, "origin")).isEqualTo(marker);
        assertThat(KafkaTestClient.header(dead, "dead-letter-reason")).isNotBlank();
        assertThat(KafkaTestClient.header(dead, "dead-letter-topic")).isEqualTo(WorkerTestResource.REQUESTS);
        assertThat(gateway.imageCalls()).isEmpty();
    }

    @Test
    void acceptsACloudEventInBinaryMode() {
        String id = newId("ce");
        kafka.send(
                WorkerTestResource.REQUESTS,
                null,
                request(id, ""),
                Map.of(
                        "ce_specversion", "1.0",
                        "ce_id", id,
                        "ce_source", "test",
                        "ce_type", "image.request",
                        "content-type", "application/json"));

        assertThat(result(id).topic()).isEqualTo("image-completed");
    }

    @Test
    void replaysARecordedResultWithoutCallingTheGatewayAgain() {
        String id = newId("again");
        send(request(id, ""));
        JsonNode first = body(result(id));

        send(request(id, ""));
        await().atMost(WITHIN).until(() -> kafka.results(id).size() == 2);

        assertThat(body(kafka.results(id).get(1))).isEqualTo(first);
        assertThat(callsFor(id)).hasSize(1);
    }

    @Test
    void copiesInFlightAtOnceMakeOneCall() {
        gateway.control().setLatency(Duration.ofMillis(1500));
        String id = newId("dup");
        for (int i = 0; i < 3; i++) {
            send(request(id, ""));
        }

        await().atMost(WITHIN).until(() -> kafka.results(id).size() == 3);

        assertThat(callsFor(id)).hasSize(1);
        assertThat(kafka.results(id)).allSatisfy(r -> assertThat(r.topic()).isEqualTo("image-completed"));
    }

    @Test
    void neverHasMoreGatewayCallsInFlightThanTheConcurrencySetting() {
        gateway.control().setLatency(Latency.fixed(Duration.ofMillis(300)));
        List<String> ids = sendRequests(24, "conc", "");

        ids.forEach(PipelineTestSupport::result);

        // image-worker.concurrency is 4 in WorkerTestResource.
        assertThat(gateway.maxConcurrentImageCalls()).isEqualTo(4);
        assertThat(gateway.imageCalls())
                .allSatisfy(call -> assertThat(call.concurrencyAtArrival()).isLessThanOrEqualTo(4));
    }

    @Test
    void storesAnImageOfAnotherSizeAndSaysItDidNotMatch() {
        gateway.control().injectFault(Fault.wrongOutputSize(1024, 1024));
        String id = newId("mismatch");
        JsonNode event = ended(id, "\"size\":\"1536x1024\"");

        assertThat(event.path("size").path("sent").asText()).isEqualTo("1536x1024");
        assertThat(event.path("size").path("actual").asText()).isEqualTo("1024x1024");
        assertThat(event.path("size").path("matched").asBoolean()).isFalse();
    }

    @Test
    void anUnreadableResultDocumentFailsTheRequestWithoutCallingAgain() {
        String id = newId("corrupt");
        s3.putObject(
                        put -> put.bucket(WorkerTestResource.BUCKET).key("results/" + id + ".json"),
                        software.amazon.awssdk.core.async.AsyncRequestBody.fromString("{not json"))
                .join();

        JsonNode event = ended(id, "");

        assertThat(event.path("error").path("code").asText()).isEqualTo("STORAGE_ERROR");
        assertThat(event.path("error").path("message").asText()).contains("new requestId");
        assertThat(callsFor(id)).isEmpty();
    }
}
