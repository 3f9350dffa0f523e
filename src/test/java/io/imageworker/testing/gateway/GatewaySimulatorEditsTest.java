package io.imageworker.testing.gateway;

import static io.imageworker.testing.gateway.SimulatorHttp.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.testing.FileParts;
import io.imageworker.testing.images.TestImages;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** {@code POST /v1/images/edits}: multipart parsing, image choice, type checks, sizes, records. */
class GatewaySimulatorEditsTest extends SimulatorTestSupport {

    static final byte[] BASE_PNG = TestImages.png(1536, 1024);
    static final byte[] REF_JPEG = TestImages.jpeg(640, 480);
    static final byte[] REF_WEBP = TestImages.webp(800, 600);

    static Multipart form() {
        return new Multipart().text("model", "gpt-image-2").text("prompt", "make the sky stormy");
    }

    @Test
    void editsIntoAnImageOfTheRequestedSizeAndRecordsEveryPartInOrder() {
        HttpResponse<String> response = http.edit(form().text("size", "1024x1536")
                .file("image[]", "base.png", "image/png", BASE_PNG)
                .file("image[]", "ref.jpg", "image/jpeg", REF_JPEG)
                .file("image[]", "ref.webp", "image/webp", REF_WEBP)
                .text("quality", "high"));

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(TestImages.decodedSize(SimulatorHttp.b64Image(response))).containsExactly(1024, 1536);
        RecordedCall call = gateway.imageCalls().get(0);
        assertThat(call.route()).isEqualTo("POST /v1/images/edits");
        assertThat(call.textFields())
                .containsEntry("model", "gpt-image-2")
                .containsEntry("prompt", "make the sky stormy")
                .containsEntry("size", "1024x1536")
                .containsEntry("quality", "high");
        assertThat(call.fileParts())
                .extracting(FileParts::placement)
                .containsExactly(
                        tuple("image[]", "base.png", "image/png", "image/png", 1536, 1024, 1),
                        tuple("image[]", "ref.jpg", "image/jpeg", "image/jpeg", 640, 480, 2),
                        tuple("image[]", "ref.webp", "image/webp", "image/webp", 800, 600, 3));
        assertThat(call.fileParts().get(1).byteLength()).isEqualTo(REF_JPEG.length);
        assertThat(call.usedImages()).containsExactly("base.png", "ref.jpg", "ref.webp");
        assertThat(call.billed()).isTrue();
    }

    @Test
    void collapsesAnOmittedSizeTo1024SquareWhateverTheSourceSize() {
        HttpResponse<String> response = http.edit(form().file("image", "base.png", "image/png", BASE_PNG));

        assertThat(TestImages.decodedSize(SimulatorHttp.b64Image(response))).containsExactly(1024, 1024);
        assertThat(gateway.imageCalls().get(0).silentChanges()).containsExactly(SilentChange.SIZE_DEFAULTED);
    }

    @Test
    void keepsTheReferenceOrderAsSentSoAShuffleIsVisibleOnlyInTheRecord() {
        http.edit(form().file("image[]", "ref.jpg", "image/jpeg", REF_JPEG)
                .file("image[]", "base.png", "image/png", BASE_PNG));

        RecordedCall call = gateway.imageCalls().get(0);
        assertThat(call.usedImages()).containsExactly("ref.jpg", "base.png");
        assertThat(call.status()).isEqualTo(200);
        assertThat(call.silentChanges()).containsExactly(SilentChange.SIZE_DEFAULTED);
    }

    @Test
    void usesImagePartsAndSilentlyDropsImageArrayParts() {
        HttpResponse<String> response = http.edit(form().file("image[]", "ref.jpg", "image/jpeg", REF_JPEG)
                .file("image", "base.png", "image/png", BASE_PNG)
                .file("image[]", "ref.webp", "image/webp", REF_WEBP));

        assertThat(response.statusCode()).isEqualTo(200);
        RecordedCall call = gateway.imageCalls().get(0);
        assertThat(call.fileParts())
                .extracting(RecordedCall.FilePart::fieldName, RecordedCall.FilePart::used)
                .containsExactly(tuple("image[]", false), tuple("image", true), tuple("image[]", false));
        assertThat(call.usedImages()).containsExactly("base.png");
        assertThat(call.silentChanges()).contains(SilentChange.IMAGE_ARRAY_DROPPED);
    }

    @Test
    void usesIndexedImageFieldsInAnotherOrder() {
        http.edit(form().file("image[0]", "base.png", "image/png", BASE_PNG)
                .file("image[1]", "ref.jpg", "image/jpeg", REF_JPEG));

        RecordedCall call = gateway.imageCalls().get(0);
        assertThat(call.status()).isEqualTo(200);
        assertThat(call.usedImages()).containsExactly("ref.jpg", "base.png");
        assertThat(call.silentChanges()).contains(SilentChange.REFERENCE_ORDER_SHUFFLED);
    }

    @Test
    void usesOnlyTheFirstMask() {
        byte[] mask = TestImages.png(1536, 1024);
        http.edit(form().file("image", "base.png", "image/png", BASE_PNG)
                .file("mask", "mask1.png", "image/png", mask)
                .file("mask", "mask2.png", "image/png", mask));

        RecordedCall call = gateway.imageCalls().get(0);
        assertThat(call.fileParts())
                .extracting(RecordedCall.FilePart::filename, RecordedCall.FilePart::used)
                .containsExactly(tuple("base.png", true), tuple("mask1.png", true), tuple("mask2.png", false));
        assertThat(call.silentChanges()).contains(SilentChange.EXTRA_MASKS_DROPPED);
    }

    @Test
    void refusesAFileWhoseExtensionDisagreesWithItsBytes() {
        HttpResponse<String> response = http.edit(form().file("image[]", "base.png", "image/png", BASE_PNG)
                .file("image[]", "photo.png", "image/png", REF_JPEG));

        assertErrorAnswer(response, 400)
                .isEqualTo("Invalid image file or mode for image 2, please check your image file.");
        RecordedCall call = gateway.imageCalls().get(0);
        assertThat(call.fileParts().get(1).realType()).isEqualTo("image/jpeg");
        assertThat(call.fileParts().get(1).extensionType()).isEqualTo("image/png");
        assertThat(call.billed()).isFalse();
    }

    @Test
    void refusesAFileWithoutExtensionBecauseTheGatewayCallsItPng() {
        HttpResponse<String> response = http.edit(form().file("image", "blob", "image/jpeg", REF_JPEG));
        assertErrorAnswer(response, 400)
                .isEqualTo("Invalid image file or mode for image 1, please check your image file.");
    }

    @Test
    void refusesAnUnsupportedRealType() {
        HttpResponse<String> response =
                http.edit(form().file("image", "anim.gif", "image/gif", TestImages.gif(64, 64)));

        assertThat(response.statusCode()).isEqualTo(400);
        JsonNode error = json(response).path("error");
        assertThat(error.path("message").asText()).contains("unsupported mimetype ('image/gif')");
        assertThat(error.path("code").asText()).isEqualTo("unsupported_file_mimetype");
        assertThat(gateway.imageCalls().get(0).fileParts().get(0))
                .satisfies(p -> assertThat(p.width()).isEqualTo(64));
    }

    @Test
    void answers500ImageIsRequiredWithoutAnImage() {
        HttpResponse<String> response = http.edit(form().text("size", "1024x1024"));

        assertThat(response.statusCode()).isEqualTo(500);
        JsonNode error = json(response).path("error");
        assertThat(error.path("message").asText()).startsWith("image is required (request id: ");
        assertThat(error.path("code").asText()).isEqualTo("convert_request_failed");
        assertThat(gateway.imageCalls().get(0).billed()).isFalse();
    }

    @Test
    void cannotParseABodyWhoseBoundaryDoesNotMatchTheContentType() {
        Multipart form = form().file("image", "base.png", "image/png", BASE_PNG)
                .contentType("multipart/form-data; boundary=hand-set-boundary");
        HttpResponse<String> response = http.edit(form);

        assertErrorAnswer(response, 400)
                .startsWith("Model name not specified, model name cannot be empty (request id: ");
        assertThat(gateway.imageCalls().get(0).textFields()).isEmpty();
    }

    @Test
    void cannotParseAHandSetContentTypeWithoutBoundary() {
        HttpResponse<String> response = http.edit(
                form().file("image", "base.png", "image/png", BASE_PNG).contentType("multipart/form-data"));
        assertThat(response.statusCode()).isEqualTo(400);
    }

    @Test
    void refusesAnotherModel() {
        HttpResponse<String> response = http.edit(new Multipart()
                .text("model", "gpt-image-1")
                .text("prompt", "x")
                .file("image", "base.png", "image/png", BASE_PNG));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(json(response).path("error").path("code").asText()).isEqualTo("model_not_found");
    }

    @Test
    void billsNTimesAndRecordsForbiddenFieldsSentAsFormFields() {
        http.edit(form().text("n", "2").text("moderation", "low").file("image", "base.png", "image/png", BASE_PNG));

        RecordedCall call = gateway.imageCalls().get(0);
        assertThat(call.forbiddenFields()).containsExactly("n", "moderation");
        assertThat(call.billedUnits()).isEqualTo(40_000);
    }

    @Test
    void acceptsUppercaseJpegExtensions() {
        assertThat(http.edit(form().file("image", "PHOTO.JPEG", "image/jpeg", REF_JPEG))
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void answersTheOversizeRuleOnEditsToo() {
        HttpResponse<String> response =
                http.edit(form().text("size", "16:9").file("image", "base.png", "image/png", BASE_PNG));
        assertThat(TestImages.decodedSize(SimulatorHttp.b64Image(response))).containsExactly(2048, 2048);
    }
}
