package io.imageworker.testing.gateway;

import static io.imageworker.testing.gateway.SimulatorHttp.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The OPEN_SOURCE flavour: the open-source gateway, where it differs from the specification (docs/gateway-contract.md). */
class GatewaySimulatorOpenSourceFlavourTest extends SimulatorTestSupport {

    static final String GENERATION = "{\"model\":\"gpt-image-2\",\"prompt\":\"a red bicycle\",\"size\":\"1024x1024\"}";

    @BeforeEach
    void openSourceFlavour() {
        gateway.control().update(s -> s.withFlavour(Flavour.OPEN_SOURCE));
    }

    @Test
    void servesTheHtmlConsolePageWhenTheBaseAddressOmitsV1() {
        HttpResponse<String> response = http.postJson("/images/generations", GENERATION);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
        assertThat(response.body()).contains("<div id=\"root\"></div>");
        assertThat(gateway.calls()).singleElement().satisfies(c -> assertThat(c.billed())
                .isFalse());
        assertThat(gateway.imageCalls()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/api/nothing", "/assets/nothing.js", "/v1/v1/images/generations", "/v1beta/models"})
    void answersJsonInvalidUrlUnderTheApiPrefixes(String path) {
        HttpResponse<String> response = http.postJson(path, "{}");
        assertErrorAnswer(response, 404).isEqualTo("Invalid URL (POST " + path + ")");
    }

    @Test
    void redirectsATrailingSlashAfterARealRouteBeforeCheckingTheKey() {
        HttpResponse<String> response = http.postJson("/v1/images/generations/", "sk-wrong", GENERATION);

        assertThat(response.statusCode()).isEqualTo(307);
        assertThat(response.headers().firstValue("Location")).hasValue("/v1/images/generations");
    }

    @Test
    void answers503ModelNotFoundForAnotherModel() {
        HttpResponse<String> response =
                http.generate("{\"model\":\"gpt-image-2-2026-04-21\",\"prompt\":\"a red bicycle\"}");

        assertThat(response.statusCode()).isEqualTo(503);
        String requestId = response.headers().firstValue("X-Oneapi-Request-Id").orElseThrow();
        assertThat(response.body())
                .isEqualTo("{\"error\":{\"code\":\"model_not_found\",\"message\":\"No available channel for model"
                        + " gpt-image-2-2026-04-21 under group default (distributor) (request id: " + requestId
                        + ")\",\"type\":\"new_api_error\"}}");
    }

    @Test
    void looksForDallEWhenGenerationsHaveNoModel() {
        HttpResponse<String> response = http.generate("{\"prompt\":\"a red bicycle\"}");
        assertErrorAnswer(response, 503).contains("model dall-e under group");
    }

    @ParameterizedTest
    @ValueSource(strings = {"/v1/image/batch", "/v1/batch"})
    void hasNoBatchRoutes(String path) {
        HttpResponse<String> response = http.postJson(path, "sk-wrong", "{}");
        assertThat(response.statusCode()).isEqualTo(404);
    }

    @Test
    void sendsTheVersionHeaderOnEveryAnswer() {
        assertThat(http.generate(GENERATION).headers().firstValue("X-New-Api-Version"))
                .hasValue(GatewayHandler.VERSION);
        assertThat(http.postJson("/v1/foo", "{}").headers().firstValue("X-New-Api-Version"))
                .hasValue(GatewayHandler.VERSION);
    }

    @Test
    void answersTheCap429WithTheChineseGatewayEnvelope() {
        gateway.control().setConcurrencyCap(1, 0).setLatency(Duration.ofMillis(400));
        CompletableFuture<HttpResponse<String>> first = http.postJsonAsync(GatewayRoutes.GENERATIONS, GENERATION);
        await().until(() -> gateway.imageCallsInFlight() == 1);
        HttpResponse<String> second = http.generate(GENERATION);

        assertThat(second.statusCode()).isEqualTo(429);
        JsonNode error = json(second).path("error");
        assertThat(error.path("message").asText()).startsWith("您已达到请求数限制：1分钟内最多请求1次 (request id: ");
        assertThat(error.path("type").asText()).isEqualTo("new_api_error");
        assertThat(first.join().statusCode()).isEqualTo(200);
    }

    @Test
    void refundsAModerationRefusal() {
        HttpResponse<String> response = http.generate("{\"model\":\"gpt-image-2\",\"prompt\":\"[[moderate]] x\"}");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(gateway.imageCalls().get(0).billed()).isFalse();
    }

    @Test
    void exposesGetV1betaModelsBehindTheToken() {
        assertThat(http.get("/v1beta/models", "sk-wrong").statusCode()).isEqualTo(401);
        assertThat(http.get("/v1beta/models", gateway.validApiKey()).statusCode())
                .isEqualTo(200);
        assertThat(http.get("/v1/models", gateway.validApiKey()).statusCode()).isEqualTo(200);
    }

    @Test
    void parsesTheKeyLikeNewApi() {
        String key = gateway.validApiKey();
        HttpRequest withoutBearer = http.request(GatewayRoutes.GENERATIONS)
                .header("Authorization", key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(GENERATION))
                .build();
        assertThat(http.send(withoutBearer).statusCode()).isEqualTo(200);

        HttpResponse<String> pinned = http.postJson(GatewayRoutes.GENERATIONS, key + "-3", GENERATION);
        assertThat(pinned.statusCode()).isEqualTo(403);
        assertThat(json(pinned).path("error").path("message").asText()).startsWith("普通用户不支持指定渠道");
    }

    @Test
    void refusesWith403WhenAPositiveBalanceCannotCoverThePreCharge() {
        gateway.control().setQuotaRemaining(10_000);
        HttpResponse<String> response = http.generate(GENERATION);

        assertThat(response.statusCode()).isEqualTo(403);
        JsonNode error = json(response).path("error");
        assertThat(error.path("code").asText()).isEqualTo("pre_consume_token_quota_failed");
        assertThat(error.path("message").asText())
                .startsWith("token quota is not enough, token remain quota: ＄0.020000, need quota: ＄0.040000");
        assertThat(gateway.control().quotaRemaining()).isEqualTo(10_000);
    }
}
