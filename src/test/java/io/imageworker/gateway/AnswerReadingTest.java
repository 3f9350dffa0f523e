package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A success's image is read from the answer's bytes: every shape of {@code b64_json} a gateway may send. */
class AnswerReadingTest {

    private static final byte[] IMAGE = random(3 * 1024 + 1);

    private final AnswerClassifier classifier = new AnswerClassifier(new ObjectMapper(), 2048);

    private GatewayAnswer answer(String b64Value) {
        String json = "{\"created\":1,\"data\":[{\"b64_json\":\"" + b64Value + "\"}],\"usage\":{\"total_tokens\":5}}";
        return classifier.classify(200, "application/json", null, json.getBytes(StandardCharsets.UTF_8), 1);
    }

    private static byte[] decoded(GatewayAnswer answer) {
        assertThat(answer).isInstanceOf(GatewayAnswer.Image.class);
        return ((GatewayAnswer.Image) answer).bytes();
    }

    private static GatewayFailure failure(GatewayAnswer answer) {
        assertThat(answer).isInstanceOf(GatewayAnswer.Failure.class);
        return ((GatewayAnswer.Failure) answer).failure();
    }

    /** The message of the failure a 200 answer with this body is: {@code INVALID_OUTPUT}, checked here. */
    private String invalidOutput(String json) {
        GatewayFailure failure =
                failure(classifier.classify(200, "application/json", null, json.getBytes(StandardCharsets.UTF_8), 1));
        assertThat(failure.kind()).isEqualTo(FailureKind.INVALID_OUTPUT);
        return failure.message();
    }

    @Test
    void decodesPlainBase64() {
        assertThat(decoded(answer(Base64.getEncoder().encodeToString(IMAGE)))).isEqualTo(IMAGE);
    }

    @Test
    void decodesBase64WithEscapedSlashes() {
        String escaped = Base64.getEncoder().encodeToString(IMAGE).replace("/", "\\/");
        assertThat(escaped).contains("\\/");

        assertThat(decoded(answer(escaped))).isEqualTo(IMAGE);
    }

    @Test
    void decodesLineBrokenBase64WithEscapedNewlines() {
        String lines = Base64.getMimeEncoder().encodeToString(IMAGE).replace("\r\n", "\\n");

        assertThat(decoded(answer(lines))).isEqualTo(IMAGE);
    }

    @Test
    void decodesBase64WithSpaces() {
        String spaced = Base64.getMimeEncoder(8, " ".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(IMAGE);

        assertThat(decoded(answer(spaced))).isEqualTo(IMAGE);
    }

    @Test
    void decodesBase64WithoutPadding() {
        String unpadded = Base64.getEncoder().withoutPadding().encodeToString(IMAGE);

        assertThat(decoded(answer(unpadded))).isEqualTo(IMAGE);
    }

    @Test
    void skipsADataUriPrefix() {
        String dataUri = "data:image/png;base64," + Base64.getEncoder().encodeToString(IMAGE);

        assertThat(decoded(answer(dataUri))).isEqualTo(IMAGE);
    }

    @Test
    void refusesCharactersOutsideBase64AsInvalidOutput() {
        GatewayFailure failure = failure(answer("iVBORw0KGgo*not~base64!data%%=="));

        assertThat(failure.kind()).isEqualTo(FailureKind.INVALID_OUTPUT);
        assertThat(failure.message()).contains("not valid base64");
    }

    @Test
    void anAnswerCutInsideTheImageIsNotJson() {
        String json = "{\"created\":1,\"data\":[{\"b64_json\":\""
                + Base64.getEncoder().encodeToString(IMAGE);

        assertThat(invalidOutput(json)).contains("not JSON");
    }

    @Test
    void theImageIsTakenWithoutReadingWhatFollowsIt() {
        // Once data[0].b64_json is decoded the answer has given what it must: the rest is not scanned again.
        String json = "{\"data\":[{\"b64_json\":\"QUJD\",\"revised_prompt\":\"x\"}],\"usage\":{}} trailing";

        assertThat(decoded(
                        classifier.classify(200, "application/json", null, json.getBytes(StandardCharsets.UTF_8), 1)))
                .isEqualTo("ABC".getBytes(StandardCharsets.US_ASCII));
    }

    /** Without an image and with trailing garbage: not JSON; with the image in the second element only: none. */
    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "{\"data\":[{\"revised_prompt\":\"x\"}]} trailing | not JSON",
                "{\"data\":[{\"revised_prompt\":\"x\"},{\"b64_json\":\"QUJD\"}]} | no image"
            })
    void takesTheImageOfTheFirstElementOfDataOnly(String json, String problem) {
        assertThat(invalidOutput(json)).contains(problem);
    }

    @Test
    void readsATwoMegabyteImageWithoutCopiesOfTheAnswer() {
        byte[] image = random(2 * 1024 * 1024);
        byte[] body = ("{\"created\":1,\"data\":[{\"b64_json\":\""
                        + Base64.getEncoder().encodeToString(image) + "\"}]}")
                .getBytes(StandardCharsets.US_ASCII);
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        classifier.classify(200, "application/json", null, body, 1); // warm up the parser's classes

        long before = threads.getCurrentThreadAllocatedBytes();
        GatewayAnswer answer = classifier.classify(200, "application/json", null, body, 1);
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;

        assertThat(decoded(answer)).isEqualTo(image);
        // The decoded image itself, plus the parser's small buffers: never a String or a second copy of 2.7 MB.
        assertThat(allocated).isLessThan(image.length + 256L * 1024);
    }

    @Test
    void aClosedConnectionThatWasReusedAndNeverAnsweredIsStaleAndFree() {
        Throwable closed = new io.vertx.core.http.HttpClosedException("Connection was closed");

        GatewayFailure stale = failure(classifier.classify(closed, true, 1));
        GatewayFailure broken = failure(classifier.classify(closed, false, 1));

        assertThat(stale.kind()).isEqualTo(FailureKind.STALE_CONNECTION);
        assertThat(stale.kind().cost()).isEqualTo(io.imageworker.contract.Billing.CallCost.NOT_SENT);
        assertThat(broken.kind()).isEqualTo(FailureKind.UPSTREAM);
    }

    private static byte[] random(int size) {
        byte[] bytes = new byte[size];
        new Random(size).nextBytes(bytes);
        return bytes;
    }
}
