package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.contract.Billing;
import io.imageworker.contract.EventCodec;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.contract.VariantOutcome;
import io.imageworker.image.ImageInspector;
import io.imageworker.storage.ImageStore;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.Fault;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.S3AsyncClient;

/** {@code count} (contract v1.1), end to end: N calls, N stored variants, one event, a ledger record per variant. */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class VariantsPipelineTest extends PipelineTestSupport {

    @Inject
    S3AsyncClient s3;

    @Inject
    ImageStore store;

    @Inject
    EventCodec codec;

    private byte[] object(String key) {
        return s3.getObject(get -> get.bucket(WorkerTestResource.BUCKET).key(key), AsyncResponseTransformer.toBytes())
                .join()
                .asByteArray();
    }

    @Test
    void makesOneCallPerVariantAndPublishesOneEventWithEveryImageInCallOrder() {
        String id = newId("variants");
        JsonNode event = ended(id, "\"count\":3,\"size\":\"16:9\"");

        assertThat(kafka.results(id)).hasSize(1);
        assertThat(callsFor(id)).hasSize(3).allSatisfy(call -> assertThat(call.textFields())
                .containsEntry("size", "1536x864"));
        JsonNode images = event.path("images");
        assertThat(images).hasSize(3);
        for (int i = 0; i < 3; i++) {
            JsonNode image = images.get(i);
            String key = "images/" + id + "/" + (i + 1) + ".png";
            assertThat(image.path("key").asText()).isEqualTo(key);
            byte[] stored = object(key);
            assertThat(ImageInspector.sha256Hex(stored))
                    .isEqualTo(image.path("sha256").asText());
        }
        assertThat(event.path("image")).isEqualTo(images.get(0));
        assertThat(event.path("variants").toString()).isEqualTo("{\"requested\":3,\"delivered\":3,\"failed\":0}");
        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":3,\"billed\":3,\"unknown\":0}");
        assertThat(event.path("attempts").asInt()).isEqualTo(3);
        assertThat(event.path("size").path("actual").asText()).isEqualTo("1536x864");
        // Each variant was recorded as it ended, and the request as a whole.
        assertThat(store.findVariants(id).await().atMost(WITHIN)).hasSize(3);
        assertThat(store.findResult(id).await().atMost(WITHIN)).isPresent();
    }

    @Test
    void aVariantTheGatewayRefusesLeavesACompletionOfTheOthers() {
        gateway.control().injectFault(Fault.moderationRefusal());
        String id = newId("partial");
        JsonNode event = ended(id, "\"count\":3");

        assertThat(event.path("images")).hasSize(2);
        assertThat(event.path("variants").toString()).isEqualTo("{\"requested\":3,\"delivered\":2,\"failed\":1}");
        // A billed refusal is never repeated, and the billing sums every call of every variant.
        assertThat(callsFor(id)).hasSize(3);
        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":3,\"billed\":3,\"unknown\":0}");
        List<String> keys = new ArrayList<>();
        event.path("images").forEach(image -> keys.add(image.path("key").asText()));
        assertThat(keys).isSorted().allSatisfy(key -> assertThat(key).matches("images/" + id + "/[123]\\.png"));
    }

    @Test
    void whenEveryVariantFailsTheRequestFailsWithTheLastVariantsError() {
        gateway.control().injectFault(Fault.moderationRefusal(), 2);
        String id = newId("allfailed");
        send(request(id, "\"count\":2"));

        var record = result(id);
        JsonNode event = body(record);

        assertThat(record.topic()).isEqualTo("image-failed");
        assertThat(event.path("error").path("code").asText()).isEqualTo("REJECTED");
        assertThat(event.path("variants").toString()).isEqualTo("{\"requested\":2,\"delivered\":0,\"failed\":2}");
        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":2,\"billed\":2,\"unknown\":0}");
        assertThat(callsFor(id)).hasSize(2);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "9", "2.5", "\"2\""})
    void refusesACountOutsideOneToEightWithoutACall(String count) {
        String id = newId("badcount");
        JsonNode event = ended(id, "\"count\":" + count);

        assertThat(event.path("error").path("code").asText()).isEqualTo("INVALID_REQUEST");
        assertThat(event.path("error").path("message").asText()).startsWith("count");
        assertThat(event.has("variants")).isFalse();
        assertThat(callsFor(id)).isEmpty();
    }

    @Test
    void aRedeliveredRequestCallsOnlyForTheVariantsWithoutARecord() {
        String id = newId("resume");
        // As a worker that died in the middle of the request would have left it: variants 1 and 3 ended.
        VariantOutcome first = recorded(id, 1);
        VariantOutcome third = recorded(id, 3);
        JsonNode event = ended(id, "\"count\":4");

        assertThat(callsFor(id)).hasSize(2);
        assertThat(event.path("images")).hasSize(4);
        assertThat(event.path("images").get(0).path("sha256").asText())
                .isEqualTo(first.image().sha256());
        assertThat(event.path("images").get(2).path("sha256").asText())
                .isEqualTo(third.image().sha256());
        assertThat(event.path("images").get(1).path("key").asText()).isEqualTo("images/" + id + "/2.png");
        assertThat(event.path("images").get(3).path("key").asText()).isEqualTo("images/" + id + "/4.png");
        // The billing counts the calls of the earlier attempt too.
        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":4,\"billed\":4,\"unknown\":0}");
        assertThat(event.path("variants").toString()).isEqualTo("{\"requested\":4,\"delivered\":4,\"failed\":0}");
    }

    @Test
    void aVariantRecordedUnderTheOldLayoutIsReplayedWithItsOwnKey() {
        String id = newId("legacy");
        // Recorded by a worker of contract v1.1, which stored variant i at <prefix><requestId>-<i>.<ext>.
        VariantOutcome first = recorded(id, 1, "images/" + id + "-1.png");
        JsonNode event = ended(id, "\"count\":2");

        assertThat(callsFor(id)).hasSize(1);
        assertThat(event.path("images").get(0).path("key").asText())
                .isEqualTo(first.image().key());
        assertThat(event.path("images").get(0).path("sha256").asText())
                .isEqualTo(first.image().sha256());
        assertThat(event.path("images").get(1).path("key").asText()).isEqualTo("images/" + id + "/2.png");
    }

    /**
     * The case that was found: request {@code X-2} stored at {@code images/X-2.png}, then request {@code X} with
     * {@code count: 3} overwrote it with its variant 2. In both orders, each event's image is still the bytes it names.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void requestXWithVariantsAndRequestX2KeepTheirOwnImages(boolean singleFirst) {
        String x = newId("clash");
        String x2 = x + "-2";
        List<JsonNode> events = new ArrayList<>();
        // The stand-in answers one size with one image: two sizes make an overwritten object show.
        for (String id : singleFirst ? List.of(x2, x) : List.of(x, x2)) {
            events.add(ended(id, id.equals(x) ? "\"count\":3,\"size\":\"1024x1024\"" : "\"size\":\"1536x1024\""));
        }

        List<JsonNode> images = new ArrayList<>();
        // A single request's event has only `image`; a request with count has `images` too.
        events.forEach(event -> {
            if (event.has("images")) {
                event.path("images").forEach(images::add);
            } else {
                images.add(event.path("image"));
            }
        });
        assertThat(images).hasSize(4);
        assertThat(images.stream().map(image -> image.path("key").asText()).distinct())
                .hasSize(4)
                .contains("images/" + x2 + ".png", "images/" + x + "/2.png");
        for (JsonNode image : images) {
            assertThat(ImageInspector.sha256Hex(object(image.path("key").asText())))
                    .as(image.path("key").asText())
                    .isEqualTo(image.path("sha256").asText());
        }
    }

    /** Writes the record of a variant that ended with a stored image, as the worker does, and returns it. */
    private VariantOutcome recorded(String id, int variant) {
        return recorded(id, variant, "images/" + id + "/" + variant + ".png");
    }

    private VariantOutcome recorded(String id, int variant, String key) {
        String sha256 = ImageInspector.sha256Hex(key.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        VariantOutcome outcome = new VariantOutcome(
                variant,
                new TerminalEvent.StoredImage(
                        WorkerTestResource.BUCKET,
                        key,
                        "s3://" + WorkerTestResource.BUCKET + "/" + key,
                        null,
                        "image/png",
                        1024,
                        1024,
                        1000,
                        sha256),
                new TerminalEvent.SizeReport(null, "1024x1024", "1024x1024", true),
                null,
                1,
                new Billing(1, 1, 0),
                1000L,
                10L);
        store.putVariant(id, variant, codec.write(id, outcome)).await().atMost(WITHIN);
        return outcome;
    }

    /**
     * Issue 48: the ids {@code .} and {@code ..} follow the id rule's alphabet but are no name in a key ({@code
     * images/./2.png}); with {@code count} above 1 they were refused by the store only after their calls were billed.
     * They are refused by validation now, with any count and prefix, and answered typed with no call; a copy sent
     * again replays the refusal. The prompts carry a marker of their own: every prompt holds a '.'.
     */
    @Test
    void idsThatAreNoKeySegmentAreRefusedBeforeAnyCallWithAnyCount() {
        String marker = newId("dots");
        send(dotted(".", marker, ""));
        send(dotted("..", marker, ",\"count\":3,\"output\":{\"keyPrefix\":\"images/\"}"));
        send(dotted(".", marker, ",\"count\":3"));

        for (String id : List.of(".", "..")) {
            JsonNode event = body(result(id));
            assertThat(event.path("error").path("code").asText()).as(id).isEqualTo("INVALID_REQUEST");
            assertThat(event.path("error").path("message").asText()).as(id).contains("requestId must not be");
            assertThat(event.path("error").path("retryable").asBoolean()).isFalse();
            assertThat(event.path("attempts").asInt()).isZero();
            assertThat(event.path("billing").path("calls").asInt()).isZero();
        }
        await().atMost(WITHIN).until(() -> kafka.results(".").size() == 2);
        assertThat(kafka.results(".")).allSatisfy(record -> assertThat(
                        body(record).path("error").path("code").asText())
                .isEqualTo("INVALID_REQUEST"));
        assertThat(gateway.imageCalls())
                .as("no call for any of them")
                .filteredOn(
                        call -> String.valueOf(call.textFields().get("prompt")).contains(marker))
                .isEmpty();
    }

    private static String dotted(String id, String marker, String extraFields) {
        return "{\"requestId\":\"" + id + "\",\"prompt\":\"a lighthouse, " + marker + "\"" + extraFields + "}";
    }
}
