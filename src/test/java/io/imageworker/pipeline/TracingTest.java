package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.KafkaTestClient;
import io.imageworker.testing.StoreProxyTestResource;
import io.imageworker.testing.gateway.Fault;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.images.TestImages;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/** One request is one trace (traces on: {@link OptInProfile}): the worker's span under the producer's, a child span per stage, the result its child. */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@TestProfile(OptInProfile.class)
@WithTestResource(StoreProxyTestResource.class)
class TracingTest extends PipelineTestSupport {

    private static final String PRODUCER_SPAN = "00f067aa0ba902b7";

    @Inject
    InMemorySpanExporter exporter;

    private String sendTraced(String id, String json) {
        byte[] trace = new byte[16];
        ThreadLocalRandom.current().nextBytes(trace);
        String traceId = HexFormat.of().formatHex(trace);
        sendInTrace(id, json, traceId, PRODUCER_SPAN);
        return traceId;
    }

    /** The spans of a trace once its request's span and its publish have ended. */
    private List<SpanData> trace(String traceId) {
        await().atMost(WITHIN).until(() -> spans(traceId).stream()
                .map(SpanData::getName)
                .toList()
                .containsAll(List.of("image-request", "publish")));
        return spans(traceId);
    }

    private List<SpanData> spans(String traceId) {
        return exporter.getFinishedSpanItems().stream()
                .filter(span -> span.getTraceId().equals(traceId))
                .toList();
    }

    private static SpanData named(List<SpanData> spans, String name) {
        return spans.stream()
                .filter(span -> span.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no span " + name + " in " + spans));
    }

    @Test
    void aRequestIsOneSpanUnderTheProducersWithAChildPerStageAndTheResultAsItsChild() {
        String id = newId("traced");
        String traceId = sendTraced(id, request(id, ""));
        ConsumerRecord<byte[], byte[]> result = result(id);

        List<SpanData> spans = trace(traceId);
        SpanData request = named(spans, "image-request");
        assertThat(request.getParentSpanId()).isEqualTo(PRODUCER_SPAN);
        assertThat(request.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(request.getAttributes().get(AttributeKey.stringKey("image_worker.request_id")))
                .isEqualTo(id);
        assertThat(request.getAttributes().get(AttributeKey.stringKey("image_worker.outcome")))
                .isEqualTo("image.completed");
        List<String> children = spans.stream()
                .filter(span -> span.getParentSpanId().equals(request.getSpanId()))
                .map(SpanData::getName)
                .toList();
        assertThat(children)
                .containsExactlyInAnyOrder(
                        "ledger lookup",
                        "validate",
                        "gateway call",
                        "take image",
                        "store image",
                        "ledger write",
                        "publish");
        SpanData call = named(spans, "gateway call");
        assertThat(call.getKind()).isEqualTo(SpanKind.CLIENT);
        assertThat(call.getAttributes().get(AttributeKey.stringKey("http.request.method")))
                .isEqualTo("POST");
        assertThat(call.getAttributes().get(AttributeKey.longKey("http.response.status_code")))
                .isEqualTo(200L);
        // The trace reaches the gateway: the call carries the call span's context.
        assertThat(callsFor(id))
                .singleElement()
                .extracting(RecordedCall::traceparent)
                .isEqualTo("00-" + traceId + "-" + call.getSpanId() + "-01");
        assertThat(call.getAttributes().get(AttributeKey.stringKey("image_worker.cost")))
                .isEqualTo("BILLED");
        // The result's parent is the worker's span of the request.
        assertThat(KafkaTestClient.header(result, "traceparent"))
                .isEqualTo("00-" + traceId + "-" + request.getSpanId() + "-01");
    }

    @Test
    void eachGatewayAttemptIsASpanSayingWhatItCostAndWhatCameNext() {
        gateway.control().injectFault(Fault.serverError(500));
        String id = newId("traced-retry");
        String traceId = sendTraced(id, request(id, ""));
        result(id);

        List<SpanData> calls = trace(traceId).stream()
                .filter(span -> span.getName().equals("gateway call"))
                .sorted((a, b) -> Long.compare(a.getStartEpochNanos(), b.getStartEpochNanos()))
                .toList();
        assertThat(calls).hasSize(2);
        assertThat(calls.get(0).getAttributes().get(AttributeKey.longKey("http.response.status_code")))
                .isEqualTo(500L);
        assertThat(calls.get(0).getAttributes().get(AttributeKey.stringKey("image_worker.cost")))
                .isEqualTo("UNKNOWN");
        assertThat(calls.get(0).getAttributes().get(AttributeKey.stringKey("image_worker.next")))
                .startsWith("retried");
        assertThat(calls.get(1).getAttributes().get(AttributeKey.longKey("http.response.status_code")))
                .isEqualTo(200L);
    }

    @Test
    void eachReferenceOfAnEditIsASpan() {
        String id = newId("traced-edit");
        String base = Base64.getEncoder().encodeToString(TestImages.png(640, 480));
        String reference = Base64.getEncoder().encodeToString(TestImages.jpeg(320, 240));
        String traceId = sendTraced(
                id,
                request(
                        id,
                        "\"operation\":\"edit\",\"references\":[{\"base64\":\"" + base
                                + "\",\"contentType\":\"image/png\"},{\"base64\":\"" + reference
                                + "\",\"contentType\":\"image/jpeg\"}]"));
        result(id);

        List<String> references = trace(traceId).stream()
                .filter(span -> span.getName().equals("reference"))
                .map(span -> span.getAttributes().get(AttributeKey.stringKey("image_worker.reference")))
                .toList();
        assertThat(references).containsExactlyInAnyOrder("references[0]", "references[1]");
    }

    @Test
    void withoutATraceparentTheRequestStartsATraceOfItsOwn() {
        String id = newId("untraced");
        send(request(id, ""));
        ConsumerRecord<byte[], byte[]> result = result(id);

        String traceparent = KafkaTestClient.header(result, "traceparent");
        assertThat(traceparent).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01");
        String traceId = traceparent.split("-")[1];
        await().atMost(Duration.ofSeconds(10)).until(() -> !spans(traceId).isEmpty());
        assertThat(named(trace(traceId), "image-request").getParentSpanId()).isEqualTo("0000000000000000");
    }
}
