package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.contract.Billing.CallCost;
import io.imageworker.contract.ErrorCode;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AnswerClassifierTest {

    private final AnswerClassifier classifier = new AnswerClassifier(new ObjectMapper(), 2048);

    private GatewayAnswer classify(int status, String contentType, String retryAfter, String body, long latencyMs) {
        return classifier.classify(status, contentType, retryAfter, body.getBytes(StandardCharsets.UTF_8), latencyMs);
    }

    private GatewayFailure failure(int status, String contentType, String body) {
        GatewayAnswer answer = classify(status, contentType, null, body, 5);
        assertThat(answer).isInstanceOf(GatewayAnswer.Failure.class);
        return ((GatewayAnswer.Failure) answer).failure();
    }

    @Test
    void decodesB64JsonFromASuccess() {
        GatewayAnswer answer =
                classify(200, "application/json", null, "{\"created\":1,\"data\":[{\"b64_json\":\"QUJD\"}]}", 7);

        assertThat(answer).isInstanceOf(GatewayAnswer.Image.class);
        assertThat(((GatewayAnswer.Image) answer).bytes()).isEqualTo("ABC".getBytes(StandardCharsets.US_ASCII));
        assertThat(((GatewayAnswer.Image) answer).url()).isNull();
        assertThat(answer.latencyMs()).isEqualTo(7);
    }

    @Test
    void takesUrlFromASuccessEvenWhenB64WasExpected() {
        GatewayAnswer answer =
                classify(200, "application/json", null, "{\"created\":1,\"data\":[{\"url\":\"https://x/y.png\"}]}", 7);

        assertThat(answer).isInstanceOf(GatewayAnswer.Image.class);
        assertThat(((GatewayAnswer.Image) answer).bytes()).isNull();
        assertThat(((GatewayAnswer.Image) answer).url()).isEqualTo("https://x/y.png");
    }

    @Test
    void treatsA200HtmlConsolePageAsAWrongAddressNotBilled() {
        GatewayFailure failure = failure(200, "text/html; charset=utf-8", "<!doctype html><html>console</html>");

        assertThat(failure.kind()).isEqualTo(FailureKind.MISCONFIGURED);
        assertThat(failure.kind().cost()).isEqualTo(CallCost.REFUSED);
        assertThat(failure.kind().errorCode()).isEqualTo(ErrorCode.GATEWAY_MISCONFIGURED);
    }

    @Test
    void treatsA200WithoutImageAsBilledInvalidOutput() {
        GatewayFailure failure = failure(200, "application/json", "{\"error\":{\"message\":\"boom\"}}");

        assertThat(failure.kind()).isEqualTo(FailureKind.INVALID_OUTPUT);
        assertThat(failure.kind().cost()).isEqualTo(CallCost.BILLED);
        assertThat(failure.message()).contains("boom");
    }

    @ParameterizedTest
    @CsvSource({
        "401, application/json, '{\"error\":{\"code\":\"\",\"message\":\"Invalid token\",\"type\":\"new_api_error\"}}', UNAUTHORIZED",
        "404, application/json, '{\"error\":{\"message\":\"Invalid URL (POST /v1/v1/images)\"}}', MISCONFIGURED",
        "307, text/plain, '', MISCONFIGURED",
        "429, application/json, '', RATE_LIMITED",
        "400, application/json, '{\"error\":{\"message\":\"rejected by the safety system\",\"code\":\"moderation_blocked\"}}', REJECTED",
        "422, application/json, '{}', REJECTED",
        "403, application/json, '{\"error\":{\"message\":\"quota\"}}', REFUSED",
        "503, application/json, '{\"error\":{\"code\":\"model_not_found\",\"message\":\"No available channel\"}}', REFUSED",
        "500, application/json, '{\"error\":{\"code\":\"sensitive_words_detected\"}}', REFUSED",
        "500, application/json, '{\"error\":{\"code\":\"do_request_failed\"}}', UPSTREAM",
        "503, application/json, '{}', UPSTREAM",
        "502, text/html, '<html>Bad gateway</html>', TIMED_OUT",
        "504, text/html, '<html>Gateway Time-out</html>', TIMED_OUT",
        "524, text/html, '<html>A timeout occurred</html>', TIMED_OUT",
        "400, text/html, '<html>nginx</html>', MISCONFIGURED"
    })
    void classifiesEveryErrorClassOfTheSpec(int status, String contentType, String body, FailureKind expected) {
        assertThat(failure(status, contentType, body).kind()).isEqualTo(expected);
    }

    @Test
    void keepsOnlyTheConfiguredStartOfAnAnswer() {
        AnswerClassifier small = new AnswerClassifier(new ObjectMapper(), 10);
        GatewayAnswer answer =
                small.classify(400, "application/json", null, "x".repeat(100).getBytes(StandardCharsets.UTF_8), 1);

        assertThat(((GatewayAnswer.Failure) answer).failure().body()).hasSize(10);
        assertThat(((GatewayAnswer.Failure) answer).failure().status()).isEqualTo(400);
    }

    @Test
    void honoursRetryAfterInSecondsAndAsADate() {
        GatewayAnswer answer = classify(429, "application/json", "7", "", 1);
        assertThat(((GatewayAnswer.Failure) answer).failure().retryAfter()).contains(Duration.ofSeconds(7));

        Instant now = Instant.parse("2026-01-01T00:00:00Z");
        assertThat(AnswerClassifier.parseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now))
                .contains(Duration.ofSeconds(30));
        assertThat(AnswerClassifier.parseRetryAfter("soon", now)).isEmpty();
    }

    @Test
    void aRefusedConnectionWasNeverSentAndATimeoutHasAnUnknownFate() {
        GatewayAnswer refused = classifier.classify(new ConnectException("Connection refused"), false, 1);
        GatewayAnswer timedOut = classifier.classify(new TimeoutException("no answer"), false, 1);
        GatewayAnswer reset = classifier.classify(new IllegalStateException("Connection was closed"), false, 1);

        assertThat(((GatewayAnswer.Failure) refused).failure().kind()).isEqualTo(FailureKind.NOT_SENT);
        assertThat(((GatewayAnswer.Failure) timedOut).failure().kind()).isEqualTo(FailureKind.TIMED_OUT);
        assertThat(((GatewayAnswer.Failure) reset).failure().kind()).isEqualTo(FailureKind.UPSTREAM);
        assertThat(FailureKind.TIMED_OUT.cost()).isEqualTo(CallCost.UNKNOWN);
    }

    @Test
    void aConnectionPoolTimeoutWasNeverSent() {
        GatewayAnswer answer = classifier.classify(
                new TimeoutException("The timeout of 10000 ms has been exceeded when getting a connection to x:443"),
                false,
                1);

        assertThat(((GatewayAnswer.Failure) answer).failure().kind()).isEqualTo(FailureKind.NOT_SENT);
    }
}
