package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.reference.ReferenceLoader;
import io.imageworker.testing.FileParts;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.images.TestImages;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.services.s3.S3AsyncClient;

/**
 * Image edit, end to end: references in the real store or inline, the real broker, the gateway simulator's record of
 * the multipart call. Sources that need other settings (https hosts, single mode, a failing store) are in {@link
 * EditReferenceRefusalTest} and {@link EditSingleModeTest}.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class EditPipelineTest extends PipelineTestSupport {

    private static final String NO_COST = "{\"calls\":0,\"billed\":0,\"unknown\":0}";

    @Inject
    S3AsyncClient s3;

    @Test
    void sendsTwoStoredReferencesInOrderTypedByTheirBytes() {
        String id = newId("edit2");
        byte[] base = TestImages.png(1200, 800);
        byte[] reference = TestImages.jpeg(640, 480);
        String baseUri = stored(id + "/base.png", base);
        String referenceUri = stored(id + "/reference.jpg", reference);
        send(edit(id, "\"quality\":\"high\"", uri(baseUri), uri(referenceUri)));

        ConsumerRecord<byte[], byte[]> record = result(id);
        JsonNode event = body(record);

        assertThat(record.topic()).isEqualTo("image-completed");
        assertThat(event.path("operation").asText()).isEqualTo("edit");
        assertThat(event.path("size").has("requested")).isFalse();
        assertThat(event.path("size").path("sent").asText()).isEqualTo("1200x800");
        assertThat(event.path("size").path("actual").asText()).isEqualTo("1200x800");
        assertThat(event.path("size").path("matched").asBoolean()).isTrue();
        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":1,\"billed\":1,\"unknown\":0}");
        RecordedCall call = onlyCall(id);
        assertThat(call.route()).isEqualTo("POST /v1/images/edits");
        assertThat(call.status()).isEqualTo(200);
        assertSentFields(call, "1200x800", "high");
        assertThat(call.fileParts())
                .extracting(
                        RecordedCall.FilePart::fieldName,
                        RecordedCall.FilePart::filename,
                        RecordedCall.FilePart::declaredContentType,
                        RecordedCall.FilePart::extensionType,
                        RecordedCall.FilePart::realType,
                        RecordedCall.FilePart::byteLength,
                        RecordedCall.FilePart::usedPosition)
                .containsExactly(
                        tuple("image[]", "image.png", "image/png", "image/png", "image/png", base.length, 1),
                        tuple(
                                "image[]",
                                "reference-1.jpg",
                                "image/jpeg",
                                "image/jpeg",
                                "image/jpeg",
                                reference.length,
                                2));
    }

    @Test
    void sendsThreeReferencesFromMixedSourcesInTheRequestsOrder() {
        String id = newId("edit3");
        // The base is inline and declared as png, but its bytes are webp: the bytes win.
        byte[] base = TestImages.webp(1536, 1024);
        byte[] first = TestImages.jpeg(640, 480);
        byte[] second = TestImages.png(300, 200);
        send(edit(
                id,
                "",
                inline(base, "image/png"),
                uri(stored(id + "/first.jpg", first)),
                uri(stored(id + "/second.png", second))));

        JsonNode event = body(result(id));

        assertThat(event.path("size").path("sent").asText()).isEqualTo("1536x1024");
        assertThat(event.path("size").path("matched").asBoolean()).isTrue();
        assertThat(onlyCall(id).fileParts())
                .extracting(FileParts::placement)
                .containsExactly(
                        tuple("image[]", "image.webp", "image/webp", "image/webp", 1536, 1024, 1),
                        tuple("image[]", "reference-1.jpg", "image/jpeg", "image/jpeg", 640, 480, 2),
                        tuple("image[]", "reference-2.png", "image/png", "image/png", 300, 200, 3));
    }

    @Test
    void sendsAJpegStoredUnderAPngKeyAsJpeg() {
        String id = newId("jpgaspng");
        byte[] jpeg = TestImages.jpeg(1024, 1024);
        send(edit(id, "", uri(stored(id + "/photo.png", jpeg, "image/png"))));

        JsonNode event = body(result(id));

        assertThat(event.path("image").path("key").asText()).isEqualTo("images/" + id + ".png");
        assertThat(onlyCall(id).fileParts())
                .extracting(
                        RecordedCall.FilePart::filename,
                        RecordedCall.FilePart::declaredContentType,
                        RecordedCall.FilePart::extensionType,
                        RecordedCall.FilePart::realType)
                .containsExactly(tuple("image.jpg", "image/jpeg", "image/jpeg", "image/jpeg"));
    }

    @ParameterizedTest
    @CsvSource({"1, '', 1200x800", "3, auto, 1200x800", "6, '', 800x1200", "6, auto, 800x1200", "8, '', 800x1200"})
    void sendsTheBaseImagesDisplayedProportionsSwappedByExifOrientation(
            int orientation, String requested, String sent) {
        String id = newId("exif" + orientation);
        byte[] base = TestImages.jpegWithOrientation(1200, 800, orientation);
        send(edit(
                id, requested.isEmpty() ? "" : "\"size\":\"" + requested + "\"", uri(stored(id + "/base.jpg", base))));

        JsonNode event = body(result(id));

        assertThat(event.path("size").path("sent").asText()).isEqualTo(sent);
        assertThat(event.path("size").path("actual").asText()).isEqualTo(sent);
        RecordedCall call = onlyCall(id);
        assertThat(call.textFields()).containsEntry("size", sent);
        // The stored pixels go out untouched: only the size asked for follows the orientation.
        assertThat(call.fileParts().get(0).width()).isEqualTo(1200);
        assertThat(call.fileParts().get(0).height()).isEqualTo(800);
    }

    @ParameterizedTest
    @CsvSource({"'', 1536x1024", "16:9, 1536x864", "1024x1536, 1024x1536", "AUTO, 1536x1024"})
    void normalizesTheBaseImagesSizeAtTheCapUnlessASizeIsGiven(String requested, String sent) {
        String id = newId("editsize");
        byte[] base = TestImages.png(3000, 2000);
        send(edit(id, requested.isEmpty() ? "" : "\"size\":\"" + requested + "\"", inline(base, "image/png")));

        JsonNode event = body(result(id));

        assertThat(event.path("size").path("sent").asText()).isEqualTo(sent);
        assertThat(event.path("size").path("actual").asText()).isEqualTo(sent);
        assertThat(event.path("size").path("matched").asBoolean()).isTrue();
        if (requested.isEmpty()) {
            assertThat(event.path("size").has("requested")).isFalse();
        } else {
            assertThat(event.path("size").path("requested").asText()).isEqualTo(requested);
        }
        assertThat(onlyCall(id).textFields()).containsEntry("size", sent);
    }

    @Test
    void sends1024SquareWhenTheBaseImagesSizeCannotBeRead() {
        String id = newId("nosize");
        // A png cut after its header: the format is known from the bytes, the size is not (the chunks do not end).
        byte[] truncated = Arrays.copyOf(TestImages.png(1200, 800), 40);
        send(edit(id, "", uri(stored(id + "/cut.png", truncated))));

        JsonNode event = body(result(id));

        assertThat(event.path("size").path("sent").asText()).isEqualTo("1024x1024");
        assertThat(onlyCall(id).textFields()).containsEntry("size", "1024x1024");
        assertThat(onlyCall(id).fileParts())
                .extracting(RecordedCall.FilePart::filename, RecordedCall.FilePart::realType)
                .containsExactly(tuple("image.png", "image/png"));
    }

    @Test
    void sendsTheMaskAsItsOwnPartTypedByItsBytes() {
        String id = newId("mask");
        byte[] base = TestImages.png(1024, 1024);
        byte[] mask = TestImages.jpeg(1024, 1024);
        send(edit(
                id,
                "\"mask\":" + uri(stored(id + "/mask.png", mask, "image/png")),
                uri(stored(id + "/base.png", base))));

        JsonNode event = body(result(id));

        assertThat(event.path("image").path("contentType").asText()).isEqualTo("image/png");
        RecordedCall call = onlyCall(id);
        assertThat(call.fileParts())
                .extracting(FileParts::upload)
                .containsExactly(
                        tuple("image[]", "image.png", "image/png", "image/png", true),
                        tuple("mask", "mask.jpg", "image/jpeg", "image/jpeg", true));
        assertThat(call.usedImages()).containsExactly("image.png");
    }

    @ParameterizedTest
    @CsvSource({
        "references, 'references[1]: is a GIF file; only png, jpeg and webp are accepted'",
        "mask, 'mask: is a GIF file; only png, jpeg and webp are accepted'"
    })
    void refusesAGifDeclaredAsPngNamingItWithoutACall(String where, String message) {
        String id = newId("gif");
        String gif = inline(TestImages.gif(64, 64), "image/png");
        String png = inline(TestImages.png(1024, 1024), "image/png");
        send(where.equals("mask") ? edit(id, "\"mask\":" + gif, png) : edit(id, "", png, gif, png));

        assertRefusedWithoutACall(id, message);
    }

    /** A bucket not on the allow-list, and a host where none is allowed. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "s3://other-bucket/ | references[0]: bucket 'other-bucket' is not in"
                        + " IMAGE_WORKER_REFERENCE_ALLOWED_BUCKETS",
                "https://images.example.com/ | references[0]: host 'images.example.com' is not in"
                        + " IMAGE_WORKER_REFERENCE_ALLOWED_HOSTS"
            })
    void refusesAReferenceOutsideTheAllowLists(String location, String refusal) {
        String id = newId("allowlist");
        send(edit(id, "", uri(location + id + ".png")));

        assertRefusedWithoutACall(id, refusal);
    }

    @Test
    void refusesAMissingObject() {
        String id = newId("missing");
        String base = stored(id + "/base.png", TestImages.png(1024, 1024));
        send(edit(id, "", uri(base), uri("s3://images/refs/" + id + "/nothing.png")));

        assertRefusedWithoutACall(
                id, "references[1]: s3://images/refs/" + id + "/nothing.png " + ReferenceLoader.UNREADABLE);
    }

    @Test
    void namesTheFirstRefusedReferenceInTheRequestsOrder() {
        String id = newId("first");
        // references[0] takes a round trip to the store to be refused, references[1] none: the order still decides.
        send(edit(id, "", uri("s3://images/refs/" + id + "/nothing.png"), inline(TestImages.gif(8, 8), "image/gif")));

        assertRefusedWithoutACall(
                id, "references[0]: s3://images/refs/" + id + "/nothing.png " + ReferenceLoader.UNREADABLE);
    }

    @Test
    void refusesAnUnusableSizeBeforeReadingAnyReference() {
        String id = newId("editbadsize");
        // Were the references read first, the missing object would be the reason given.
        send(edit(id, "\"size\":\"big\"", uri("s3://images/refs/" + id + "/nothing.png")));

        JsonNode event = body(result(id));

        assertThat(event.path("error").path("code").asText()).isEqualTo("INVALID_REQUEST");
        assertThat(event.path("error").path("message").asText()).startsWith("size \"big\" is not accepted");
        assertThat(event.path("size").path("requested").asText()).isEqualTo("big");
        assertThat(event.path("billing").toString()).isEqualTo(NO_COST);
        assertThat(callsFor(id)).isEmpty();
    }

    private void assertRefusedWithoutACall(String id, String message) {
        ConsumerRecord<byte[], byte[]> record = result(id);
        JsonNode event = body(record);
        assertThat(record.topic()).isEqualTo("image-failed");
        assertThat(event.path("operation").asText()).isEqualTo("edit");
        assertThat(event.path("error").path("code").asText()).isEqualTo("INVALID_REFERENCE");
        assertThat(event.path("error").path("message").asText()).isEqualTo(message);
        assertThat(event.path("error").path("retryable").asBoolean()).isFalse();
        assertThat(event.path("billing").toString()).isEqualTo(NO_COST);
        assertThat(event.path("attempts").asInt()).isZero();
        assertThat(callsFor(id)).isEmpty();
    }

    private RecordedCall onlyCall(String id) {
        List<RecordedCall> calls = callsFor(id);
        assertThat(calls).hasSize(1);
        return calls.get(0);
    }

    /** Puts {@code bytes} under {@code refs/<key>} in the worker's bucket, typed by the key's extension. */
    private String stored(String key, byte[] bytes) {
        return stored(key, bytes, key.endsWith(".jpg") ? "image/jpeg" : "image/png");
    }

    private String stored(String key, byte[] bytes, String contentType) {
        String fullKey = "refs/" + key;
        s3.putObject(
                        put -> put.bucket(WorkerTestResource.BUCKET)
                                .key(fullKey)
                                .contentType(contentType),
                        AsyncRequestBody.fromBytes(bytes))
                .join();
        return "s3://" + WorkerTestResource.BUCKET + "/" + fullKey;
    }

    static String uri(String uri) {
        return "{\"uri\":\"" + uri + "\"}";
    }

    static String inline(byte[] bytes, String declaredType) {
        return "{\"base64\":\"" + Base64.getEncoder().encodeToString(bytes) + "\",\"contentType\":\"" + declaredType
                + "\"}";
    }

    /** An edit request whose prompt carries its id, with the given image sources (JSON) as its references. */
    static String edit(String requestId, String extraFields, String... references) {
        return "{\"requestId\":\"" + requestId + "\",\"operation\":\"edit\",\"prompt\":\"make the sky stormy, "
                + requestId + "\",\"references\":[" + String.join(",", references) + "]"
                + (extraFields.isEmpty() ? "" : "," + extraFields) + "}";
    }
}
