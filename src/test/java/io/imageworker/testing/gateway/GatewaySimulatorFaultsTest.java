package io.imageworker.testing.gateway;

import static io.imageworker.testing.gateway.SimulatorHttp.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.testing.images.TestImages;
import java.io.EOFException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every injected fault, and how the fault queue is used up. */
class GatewaySimulatorFaultsTest extends SimulatorTestSupport {

    static final String GENERATION = "{\"model\":\"gpt-image-2\",\"prompt\":\"a red bicycle\",\"size\":\"1536x1024\"}";

    static RecordedCall onlyImageCall() {
        assertThat(gateway.imageCalls()).hasSize(1);
        return gateway.imageCalls().get(0);
    }

    /** A generation whose client gives up after {@code timeout} without an answer. */
    static HttpRequest generationGivingUpAfter(Duration timeout) {
        return http.request(GatewayRoutes.GENERATIONS)
                .header("Authorization", "Bearer " + gateway.validApiKey())
                .header("Content-Type", "application/json")
                .timeout(timeout)
                .POST(HttpRequest.BodyPublishers.ofString(GENERATION))
                .build();
    }

    @Test
    void answersAnInjectedStatusWithItsBodyAfterTheLatency() {
        gateway.control().setLatency(Duration.ofMillis(100)).injectFault(Fault.status(418, "{\"error\":\"teapot\"}"));
        HttpResponse<String> response = http.generate(GENERATION);

        assertThat(response.statusCode()).isEqualTo(418);
        assertThat(response.body()).isEqualTo("{\"error\":\"teapot\"}");
        RecordedCall call = onlyImageCall();
        assertThat(call.fault().kind()).isEqualTo(Fault.Kind.STATUS);
        assertThat(call.billed()).isFalse();
        assertThat(Duration.between(call.arrivedAt(), call.finishedAt())).isGreaterThanOrEqualTo(Duration.ofMillis(95));
    }

    @Test
    void answersAModerationRefusalAndBillsIt() {
        gateway.control().injectFault(Fault.moderationRefusal());
        HttpResponse<String> response = http.generate(GENERATION);

        assertThat(response.statusCode()).isEqualTo(400);
        JsonNode error = json(response).path("error");
        assertThat(error.path("code").asText()).isEqualTo("moderation_blocked");
        assertThat(error.path("param").asText()).isEmpty();
        assertThat(onlyImageCall().billedUnits()).isEqualTo(20_000);
    }

    @Test
    void answersAnUpstream429WithRetryAfter() {
        gateway.control().injectFault(Fault.rateLimited(7));
        HttpResponse<String> response = http.generate(GENERATION);

        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(response.headers().firstValue("Retry-After")).hasValue("7");
        assertThat(json(response).path("error").path("code").asText()).isEqualTo("rate_limit_exceeded");
        assertThat(onlyImageCall().billed()).isFalse();
    }

    @Test
    void answersAnUpstream429WithoutRetryAfter() {
        gateway.control().injectFault(Fault.rateLimited());
        HttpResponse<String> response = http.generate(GENERATION);
        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(response.headers().firstValue("Retry-After")).isEmpty();
    }

    @Test
    void answers500DoRequestFailedOrARelayed5xx() {
        gateway.control().injectFaults(Fault.serverError(500), Fault.serverError(503));
        HttpResponse<String> first = http.generate(GENERATION);
        HttpResponse<String> second = http.generate(GENERATION);

        assertThat(first.statusCode()).isEqualTo(500);
        assertThat(json(first).path("error").path("code").asText()).isEqualTo("do_request_failed");
        assertThat(json(first).path("error").path("message").asText())
                .startsWith("upstream error: do request failed (request id: ");
        assertThat(second.statusCode()).isEqualTo(503);
        assertThat(second.body())
                .isEqualTo("{\"error\":{\"message\":\"openai_error\",\"type\":\"bad_response_status_code\","
                        + "\"param\":\"\",\"code\":\"bad_response_status_code\"}}");
        assertThat(gateway.imageCalls()).noneMatch(RecordedCall::billed);
    }

    @Test
    void hangsUntilTheClientGivesUp() {
        gateway.control().injectFault(Fault.hang());
        HttpRequest request = generationGivingUpAfter(Duration.ofMillis(300));

        assertThatThrownBy(() -> http.send(request)).hasCauseInstanceOf(HttpTimeoutException.class);
        await().atMost(Duration.ofSeconds(30)).until(() -> gateway.imageCallsInFlight() == 0);
        RecordedCall call = onlyImageCall();
        assertThat(call.status()).isZero();
        assertThat(call.finishedAt()).isNotNull();
        assertThat(call.fault().kind()).isEqualTo(Fault.Kind.HANG);
        assertThat(call.billed()).isTrue();
    }

    @Test
    void endsAHangingCallOnReset() {
        gateway.control().injectFault(Fault.hang());
        CompletableFuture<HttpResponse<String>> call = http.postJsonAsync(GatewayRoutes.GENERATIONS, GENERATION);
        await().until(() ->
                !gateway.imageCalls().isEmpty() && gateway.imageCalls().get(0).fault() != null);

        gateway.reset();

        assertThatThrownBy(call::join).isInstanceOf(CompletionException.class);
        assertThat(gateway.imageCallsInFlight()).isZero();
    }

    @Test
    void holdsTheImageCallsAfterTheOnesLetThroughUntilTheirClientGivesUp() {
        gateway.control().holdImageCallsAfter(2);
        assertThat(http.generate(GENERATION).statusCode()).isEqualTo(200);
        assertThat(http.generate(GENERATION).statusCode()).isEqualTo(200);
        HttpRequest third = generationGivingUpAfter(Duration.ofMillis(300));

        assertThatThrownBy(() -> http.send(third)).hasCauseInstanceOf(HttpTimeoutException.class);
        await().atMost(Duration.ofSeconds(30)).until(() -> gateway.imageCallsInFlight() == 0);
        RecordedCall held = gateway.imageCalls().get(2);
        assertThat(held.status()).isZero();
        assertThat(held.fault()).isNull();
        assertThat(held.billed()).isFalse();

        gateway.control().stopHolding();
        assertThat(http.generate(GENERATION).statusCode()).isEqualTo(200);
    }

    @Test
    void keepsTheImageCallsAtTheGateUnansweredUntilItOpens() {
        gateway.control().closeGate();
        CompletableFuture<HttpResponse<String>> first = http.postJsonAsync(GatewayRoutes.GENERATIONS, GENERATION);
        CompletableFuture<HttpResponse<String>> second = http.postJsonAsync(GatewayRoutes.GENERATIONS, GENERATION);
        await().atMost(Duration.ofSeconds(30)).until(() -> gateway.imageCallsInFlight() == 2);
        // Calls that the latency alone would have let through long ago are still waiting.
        assertThatThrownBy(() -> first.get(500, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        assertThat(second).isNotDone();
        assertThat(gateway.imageCalls()).noneMatch(RecordedCall::billed);

        gateway.control().openGate();

        assertThat(first.join().statusCode()).isEqualTo(200);
        assertThat(second.join().statusCode()).isEqualTo(200);
        assertThat(http.generate(GENERATION).statusCode())
                .as("after the gate opened")
                .isEqualTo(200);
        assertThat(gateway.imageCalls()).hasSize(3).allMatch(RecordedCall::billed);
    }

    @Test
    void sendsATruncatedBodyThenClosesTheConnection() {
        gateway.control().injectFault(Fault.truncatedBody());

        assertThatThrownBy(() -> http.generate(GENERATION))
                .isInstanceOf(UncheckedIOException.class)
                .hasRootCauseInstanceOf(EOFException.class);
        RecordedCall call = onlyImageCall();
        assertThat(call.status()).isEqualTo(200);
        assertThat(call.billed()).isTrue();
    }

    @Test
    void answersTheHtmlConsolePageWith200() {
        gateway.control().injectFault(Fault.htmlConsolePage());
        HttpResponse<String> response = http.generate(GENERATION);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
        assertThat(response.body()).startsWith("<!doctype html>").contains("<title>New API</title>");
        assertThat(onlyImageCall().billed()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(ints = {502, 504, 524})
    void answersAProxyErrorPageAfterADelay(int status) {
        gateway.control().injectFault(Fault.proxyHtml(status, Duration.ofMillis(200)));
        HttpResponse<String> response = http.generate(GENERATION);

        assertThat(response.statusCode()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
        assertThat(response.body())
                .contains(String.valueOf(status))
                .contains(status == 524 ? "A timeout occurred" : "nginx");
        RecordedCall call = onlyImageCall();
        assertThat(Duration.between(call.arrivedAt(), call.finishedAt()))
                .isGreaterThanOrEqualTo(Duration.ofMillis(195));
        assertThat(call.billed()).isTrue();
    }

    @Test
    void returnsAnImageOfAnotherSize() {
        gateway.control().injectFaults(Fault.wrongOutputSize(), Fault.wrongOutputSize(1024, 1024));
        HttpResponse<String> picked = http.generate(GENERATION);
        HttpResponse<String> given = http.generate(GENERATION);

        assertThat(TestImages.decodedSize(SimulatorHttp.b64Image(picked))).containsExactly(1024, 1536);
        assertThat(TestImages.decodedSize(SimulatorHttp.b64Image(given))).containsExactly(1024, 1024);
        assertThat(gateway.imageCalls()).allSatisfy(c -> {
            assertThat(c.requestedSize()).isEqualTo("1536x1024");
            assertThat(c.silentChanges()).contains(SilentChange.OUTPUT_SIZE_WRONG);
            assertThat(c.billed()).isTrue();
        });
        assertThat(gateway.imageCalls().get(0).outputSize()).isEqualTo("1024x1536");
    }

    @Test
    void dropsLaterReferenceImagesWithoutASignal() {
        gateway.control().injectFault(Fault.dropLaterReferenceImages());
        HttpResponse<String> response = http.edit(new Multipart()
                .text("model", "gpt-image-2")
                .text("prompt", "blend them")
                .text("size", "1024x1024")
                .file("image[]", "base.png", "image/png", TestImages.png(1024, 1024))
                .file("image[]", "ref.jpg", "image/jpeg", TestImages.jpeg(320, 240)));

        assertThat(response.statusCode()).isEqualTo(200);
        RecordedCall call = onlyImageCall();
        assertThat(call.fileParts()).hasSize(2);
        assertThat(call.usedImages()).containsExactly("base.png");
        assertThat(call.silentChanges()).containsExactly(SilentChange.LATER_IMAGES_DROPPED);
    }

    @Test
    void returnsBase64ThatDoesNotDecodeEvenWhenUrlsAreConfigured() {
        gateway.control().setResponseForm(ResponseForm.URL).injectFault(Fault.badBase64());
        HttpResponse<String> response = http.generate(GENERATION);

        String b64 = json(response).path("data").path(0).path("b64_json").asText();
        assertThat(b64).isNotEmpty();
        assertThatThrownBy(() -> Base64.getDecoder().decode(b64)).isInstanceOf(IllegalArgumentException.class);
        assertThat(onlyImageCall().responseForm()).isEqualTo(ResponseForm.B64);
    }

    @Test
    void returnsBytesThatAreNotAnImageInEitherForm() {
        gateway.control().injectFault(Fault.nonImageBytes());
        byte[] inline = SimulatorHttp.b64Image(http.generate(GENERATION));
        assertThat(ImageProbe.realType(inline)).isEqualTo(ImageProbe.UNKNOWN);

        gateway.control().setResponseForm(ResponseForm.URL).injectFault(Fault.nonImageBytes());
        String url =
                json(http.generate(GENERATION)).path("data").path(0).path("url").asText();
        HttpResponse<byte[]> download = http.download(url);
        assertThat(download.statusCode()).isEqualTo(200);
        assertThat(ImageProbe.realType(download.body())).isEqualTo(ImageProbe.UNKNOWN);
    }

    @ParameterizedTest
    @ValueSource(ints = {404, 403})
    void returnsAUrlThatIsAlreadyExpired(int status) {
        gateway.control().injectFault(Fault.expiredUrl(status));
        String url =
                json(http.generate(GENERATION)).path("data").path(0).path("url").asText();

        assertThat(http.download(url).statusCode()).isEqualTo(status);
        assertThat(onlyImageCall().responseForm()).isEqualTo(ResponseForm.URL);
        assertThat(gateway.downloads()).singleElement().satisfies(d -> assertThat(d.status())
                .isEqualTo(status));
    }

    @Test
    void returnsAUrlWhoseDownloadHangs() {
        gateway.control().injectFault(Fault.hangingUrl());
        String url =
                json(http.generate(GENERATION)).path("data").path(0).path("url").asText();
        HttpRequest download = HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofMillis(300))
                .build();

        assertThatThrownBy(() -> http.client.send(download, HttpResponse.BodyHandlers.ofByteArray()))
                .isInstanceOf(HttpTimeoutException.class);
        assertThat(gateway.downloads()).singleElement().satisfies(d -> assertThat(d.status())
                .isZero());
    }

    @Test
    void appliesAFaultToTheNextNImageCallsThatPassTheGatewayChecks() {
        gateway.control().injectFault(Fault.serverError(502), 2);
        assertThat(gateway.control().pendingFaults()).hasSize(2);

        assertThat(http.postJson(GatewayRoutes.GENERATIONS, "sk-wrong", GENERATION)
                        .statusCode())
                .isEqualTo(401);
        assertThat(http.postJson("/v1/chat/completions", "{\"model\":\"gpt-4o\"}")
                        .statusCode())
                .isEqualTo(200);
        assertThat(http.generate(GENERATION).statusCode()).isEqualTo(502);
        assertThat(gateway.control().pendingFaults()).hasSize(1);
        assertThat(http.generate(GENERATION).statusCode()).isEqualTo(502);
        assertThat(http.generate(GENERATION).statusCode()).isEqualTo(200);

        assertThat(gateway.imageCalls())
                .extracting(c -> c.fault() == null ? null : c.fault().kind())
                .containsExactly(null, Fault.Kind.SERVER_ERROR, Fault.Kind.SERVER_ERROR, null);
    }

    @Test
    void billsOrNotAsTheFaultSays() {
        gateway.control()
                .injectFaults(
                        Fault.serverError(500).billed(true),
                        Fault.moderationRefusal().billed(false));
        http.generate(GENERATION);
        http.generate(GENERATION);
        assertThat(gateway.imageCalls()).extracting(RecordedCall::billed).containsExactly(true, false);
    }
}
