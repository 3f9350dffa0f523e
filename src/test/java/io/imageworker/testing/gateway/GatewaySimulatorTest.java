package io.imageworker.testing.gateway;

import static io.imageworker.testing.gateway.SimulatorHttp.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.testing.images.TestImages;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The SPEC flavour against the specified gateway (docs/gateway-contract.md): addressing, token, generations, silent failures, billing. */
class GatewaySimulatorTest extends SimulatorTestSupport {

    static final String PRICE_KEY = "pricePerCall";

    static String generation(String size) {
        return "{\"model\":\"gpt-image-2\",\"prompt\":\"a lighthouse at dawn, oil painting\"" + size + "}";
    }

    static void assertInvalidUrl(HttpResponse<String> response, String method, String path) {
        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(response.body())
                .isEqualTo("{\"error\":{\"message\":\"Invalid URL (" + method + " " + path
                        + ")\",\"type\":\"invalid_request_error\",\"param\":\"\",\"code\":\"\"}}");
        assertThat(response.headers().firstValue("X-Oneapi-Request-Id")).isPresent();
    }

    @Nested
    class Addressing {

        @Test
        void answersInvalidUrlWhenTheBaseAddressOmitsV1() {
            HttpResponse<String> response = http.postJson("/images/generations", generation(""));
            assertInvalidUrl(response, "POST", "/images/generations");
            assertThat(gateway.imageCalls()).isEmpty();
            assertThat(gateway.calls()).singleElement().satisfies(c -> {
                assertThat(c.route()).isEqualTo("POST /images/generations");
                assertThat(c.status()).isEqualTo(404);
                assertThat(c.billed()).isFalse();
            });
        }

        @Test
        void answersInvalidUrlWhenTheOperationPathIsDoubled() {
            assertInvalidUrl(
                    http.postJson("/v1/v1/images/generations", generation("")), "POST", "/v1/v1/images/generations");
        }

        @Test
        void answersInvalidUrlWhenTheBaseAddressEndsWithASlash() {
            assertInvalidUrl(
                    http.postJson("/v1//images/generations", generation("")), "POST", "/v1//images/generations");
        }

        @Test
        void answersInvalidUrlForATrailingSlashAfterARealRoute() {
            assertInvalidUrl(
                    http.postJson("/v1/images/generations/", generation("")), "POST", "/v1/images/generations/");
        }

        @Test
        void answersInvalidUrlForV1betaModelsWithAnyMethod() {
            assertInvalidUrl(http.get("/v1beta/models", gateway.validApiKey()), "GET", "/v1beta/models");
            assertInvalidUrl(http.postJson("/v1beta/models", "{}"), "POST", "/v1beta/models");
        }

        @Test
        void answersInvalidUrlForAnUnknownRouteWithoutLookingAtTheKey() {
            assertInvalidUrl(http.postJson("/v1/foo", "sk-wrong", "{}"), "POST", "/v1/foo");
            assertInvalidUrl(http.postJson("/v1/images/variations", null, "{}"), "POST", "/v1/images/variations");
        }

        @Test
        void answersInvalidUrlForGetOnAPostRoute() {
            assertInvalidUrl(
                    http.get(GatewayRoutes.GENERATIONS, gateway.validApiKey()), "GET", GatewayRoutes.GENERATIONS);
        }

        @Test
        void leavesTheQueryOutOfTheInvalidUrlMessage() {
            assertInvalidUrl(http.postJson("/v1/nothing?x=1", "{}"), "POST", "/v1/nothing");
        }
    }

    @Nested
    class Token {

        @Test
        void refusesAWrongKeyWith401InTheGatewayEnvelopeWithItsRequestId() {
            HttpResponse<String> response = http.postJson(GatewayRoutes.GENERATIONS, "sk-wrong", generation(""));

            assertThat(response.statusCode()).isEqualTo(401);
            String requestId =
                    response.headers().firstValue("X-Oneapi-Request-Id").orElseThrow();
            assertThat(requestId).matches("\\d{14}\\d{1,9}[0-9a-f]{8}[A-Za-z0-9]{8}");
            assertThat(response.body())
                    .isEqualTo("{\"error\":{\"code\":\"\",\"message\":\"Invalid token (request id: " + requestId
                            + ")\",\"type\":\"new_api_error\"}}");
            assertThat(response.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
            assertThat(response.headers().firstValue("X-New-Api-Version")).isEmpty();
            assertThat(gateway.calls()).singleElement().satisfies(c -> {
                assertThat(c.requestId()).isEqualTo(requestId);
                assertThat(c.errorMessage()).isEqualTo("Invalid token");
                assertThat(c.billed()).isFalse();
            });
        }

        @Test
        void refusesAMissingOrMalformedAuthorizationHeader() {
            assertThat(http.postJson(GatewayRoutes.GENERATIONS, null, generation(""))
                            .statusCode())
                    .isEqualTo(401);
            HttpRequest noBearer = http.request(GatewayRoutes.GENERATIONS)
                    .header("Authorization", gateway.validApiKey())
                    .POST(HttpRequest.BodyPublishers.ofString(generation("")))
                    .build();
            assertThat(http.send(noBearer).statusCode()).isEqualTo(401);
        }

        @Test
        void checksTheTokenBeforeReadingTheBody() throws Exception {
            URI base = URI.create(gateway.baseUrl());
            try (Socket socket = new Socket(base.getHost(), base.getPort())) {
                socket.setSoTimeout(5_000);
                OutputStream out = socket.getOutputStream();
                // Announce 50 MB and send none of it: the answer must come anyway.
                out.write(("POST /v1/images/generations HTTP/1.1\r\nHost: " + base.getAuthority()
                                + "\r\nAuthorization: Bearer sk-wrong\r\nContent-Type: application/json\r\n"
                                + "Content-Length: 52428800\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                BufferedReader in =
                        new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
                assertThat(in.readLine()).isEqualTo("HTTP/1.1 401 Unauthorized");
            }
        }

        @ParameterizedTest
        @CsvSource({
            "POST, /v1/images/generations",
            "POST, /v1/images/edits",
            "POST, /v1/chat/completions",
            "POST, /v1/embeddings",
            "POST, /v1/messages",
            "POST, /v1/image/batch",
            "POST, /v1/batch",
            "GET, /api/pricing"
        })
        void answers401ToAWrongKeyWithAnEmptyJsonObjectOnEveryRealRoute(String method, String path) {
            HttpRequest request = http.request(path)
                    .header("Authorization", "Bearer sk-deliberatelywrong")
                    .header("Content-Type", "application/json")
                    .method(method, method.equals("GET") ? HttpRequest.BodyPublishers.noBody() : body("{}"))
                    .build();
            HttpResponse<String> response = http.send(request);
            assertThat(response.statusCode()).isEqualTo(401);
            assertThat(json(response).path("error").path("type").asText()).isEqualTo("new_api_error");
        }

        @ParameterizedTest
        @ValueSource(strings = {"/v1/chat/completions", "/v1/embeddings", "/v1/messages"})
        void answers401ToAWrongKeyWithAnEmptyBody(String path) {
            HttpRequest request = http.request(path)
                    .header("Authorization", "Bearer sk-deliberatelywrong")
                    .POST(HttpRequest.BodyPublishers.noBody())
                    .build();
            assertThat(http.send(request).statusCode()).isEqualTo(401);
        }

        @Test
        void answers401WhileTheTokenIsRevokedAndServesAgainOnceRestored() {
            gateway.control().revokeToken();
            assertThat(http.generate(generation("")).statusCode()).isEqualTo(401);
            assertThat(http.get("/api/pricing", gateway.validApiKey()).statusCode())
                    .isEqualTo(401);

            gateway.control().restoreToken();
            assertThat(http.generate(generation("")).statusCode()).isEqualTo(200);
        }

        @Test
        void refusesTheUnbillableProbeWith400AndRecordsIt() {
            HttpResponse<String> emptyObject = http.postJson("/v1/chat/completions", "{}");
            HttpResponse<String> emptyBody = http.send(http.authorized("/v1/chat/completions")
                    .POST(HttpRequest.BodyPublishers.noBody())
                    .build());

            for (HttpResponse<String> response : List.of(emptyObject, emptyBody)) {
                assertErrorAnswer(response, 400)
                        .startsWith("Model name not specified, model name cannot be empty (request id: ");
            }
            assertThat(gateway.calls())
                    .extracting(RecordedCall::route, RecordedCall::status, RecordedCall::billed)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple("POST /v1/chat/completions", 400, false),
                            org.assertj.core.groups.Tuple.tuple("POST /v1/chat/completions", 400, false));
            assertThat(gateway.control().billedUnits()).isZero();
        }

        @Test
        void answersAnAuthenticatedChatCallWithACompletion() {
            HttpResponse<String> response = http.postJson(
                    "/v1/chat/completions",
                    "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(json(response)
                            .path("choices")
                            .path(0)
                            .path("message")
                            .path("content")
                            .asText())
                    .isEqualTo("ok");
        }

        @Test
        void listsTheModelOnThePricingRoute() {
            HttpResponse<String> response = http.get("/api/pricing", gateway.validApiKey());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(json(response).path("data").path(0).path("model_name").asText())
                    .isEqualTo("gpt-image-2");
        }

        @Test
        void answersTheBatchRoutesBehindTheToken() {
            assertThat(http.postJson("/v1/image/batch", "{\"model\":\"gpt-image-2\"}")
                            .statusCode())
                    .isEqualTo(501);
            assertThat(http.get("/v1/batch", gateway.validApiKey()).statusCode())
                    .isEqualTo(501);
        }

        private static HttpRequest.BodyPublisher body(String text) {
            return HttpRequest.BodyPublishers.ofString(text);
        }
    }

    @Nested
    class Generations {

        @Test
        void returnsARealPngOfTheRequestedSizeAsBase64() {
            HttpResponse<String> response = http.generate(generation(",\"size\":\"1536x864\",\"quality\":\"high\""));

            assertThat(response.statusCode()).isEqualTo(200);
            JsonNode body = json(response);
            assertThat(body.path("created").asLong())
                    .isCloseTo(Instant.now().getEpochSecond(), org.assertj.core.data.Offset.offset(5L));
            assertThat(body.path("data")).hasSize(1);
            assertThat(TestImages.decodedSize(SimulatorHttp.b64Image(response))).containsExactly(1536, 864);
            assertThat(gateway.imageCalls()).singleElement().satisfies(c -> {
                assertThat(c.status()).isEqualTo(200);
                assertThat(c.responseForm()).isEqualTo(ResponseForm.B64);
                assertThat(c.requestedSize()).isEqualTo("1536x864");
                assertThat(c.outputSize()).isEqualTo("1536x864");
                assertThat(c.silentChanges()).isEmpty();
                assertThat(c.textFields()).containsEntry("model", "gpt-image-2").containsEntry("quality", "high");
            });
        }

        @Test
        void returnsAUrlOnASecondOriginWhateverResponseFormatAsked() {
            gateway.control().setResponseForm(ResponseForm.URL);
            HttpResponse<String> response =
                    http.generate(generation(",\"size\":\"1024x1536\",\"response_format\":\"b64_json\""));

            String url = json(response).path("data").path(0).path("url").asText();
            assertThat(url).startsWith(gateway.filesBaseUrl() + "/files/").endsWith(".png");
            assertThat(URI.create(url).getPort())
                    .isNotEqualTo(URI.create(gateway.baseUrl()).getPort());
            HttpResponse<byte[]> download = http.download(url);
            assertThat(download.statusCode()).isEqualTo(200);
            assertThat(TestImages.decodedSize(download.body())).containsExactly(1024, 1536);
            assertThat(gateway.imageCalls().get(0).imageUrl()).isEqualTo(url);
            assertThat(gateway.downloads()).singleElement().satisfies(d -> assertThat(d.status())
                    .isEqualTo(200));
        }

        @Test
        void returnsBase64WhenConfiguredEvenIfTheClientAskedForAUrl() {
            HttpResponse<String> response = http.generate(generation(",\"response_format\":\"url\""));
            assertThat(json(response).path("data").path(0).has("b64_json")).isTrue();
            assertThat(json(response).path("data").path(0).has("url")).isFalse();
        }

        @Test
        void expiresReturnedUrlsAfterTheirLifetime() {
            gateway.control().update(s -> s.withResponseForm(ResponseForm.URL).withUrlLifetime(Duration.ofMillis(300)));
            String url = json(http.generate(generation("")))
                    .path("data")
                    .path(0)
                    .path("url")
                    .asText();

            assertThat(http.download(url).statusCode()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> http.download(url).statusCode() == 404);
        }

        @Test
        void mixesUrlAndBase64AnswersAtTheConfiguredRatio() {
            gateway.control().update(s -> s.withResponseForm(ResponseForm.MIXED, 0.25));
            List<ResponseForm> forms = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                JsonNode item = json(http.generate(generation(""))).path("data").path(0);
                forms.add(item.has("url") ? ResponseForm.URL : ResponseForm.B64);
            }
            assertThat(forms).filteredOn(f -> f == ResponseForm.URL).hasSize(2);
            assertThat(gateway.imageCalls())
                    .extracting(RecordedCall::responseForm)
                    .containsExactlyElementsOf(forms);
        }

        @Test
        void waitsTheConfiguredLatencyBeforeAnswering() {
            gateway.control().setLatency(Duration.ofMillis(300));
            HttpResponse<String> response = http.generate(generation(""));
            RecordedCall call = gateway.imageCalls().get(0);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(Duration.between(call.arrivedAt(), call.finishedAt()))
                    .isGreaterThanOrEqualTo(Duration.ofMillis(290));
        }

        @Test
        void refusesAnotherModelWith400ModelNotFound() {
            HttpResponse<String> response =
                    http.generate("{\"model\":\"gpt-image-2-2026-04-21\",\"prompt\":\"a lighthouse\"}");
            assertThat(response.statusCode()).isEqualTo(400);
            JsonNode error = json(response).path("error");
            assertThat(error.path("code").asText()).isEqualTo("model_not_found");
            assertThat(error.path("message").asText())
                    .startsWith(
                            "No available channel for model gpt-image-2-2026-04-21 under group default (distributor)");
            assertThat(gateway.imageCalls().get(0).billed()).isFalse();
        }

        @Test
        void refusesBodiesThatAreNotJson() {
            HttpResponse<String> response = http.generate("{\"model\":");
            assertErrorAnswer(response, 400).startsWith("Invalid request: Invalid request: invalid JSON request body");
        }

        @Test
        void refusesASensitiveWordWith500AndDoesNotBill() {
            HttpResponse<String> response =
                    http.generate("{\"model\":\"gpt-image-2\",\"prompt\":\"a test_sensitive poster\"}");
            assertThat(response.statusCode()).isEqualTo(500);
            JsonNode error = json(response).path("error");
            assertThat(error.path("code").asText()).isEqualTo("sensitive_words_detected");
            assertThat(error.path("param").asText()).isEmpty();
            assertThat(gateway.imageCalls().get(0).billed()).isFalse();
        }

        @Test
        void refusesTheModerationTriggerWith400AndBillsIt() {
            HttpResponse<String> response =
                    http.generate("{\"model\":\"gpt-image-2\",\"prompt\":\"a poster [[moderate]]\"}");
            assertThat(response.statusCode()).isEqualTo(400);
            JsonNode error = json(response).path("error");
            assertThat(error.path("code").asText()).isEqualTo("moderation_blocked");
            assertThat(error.path("type").asText()).isEqualTo("image_generation_user_error");
            assertThat(error.path("message").asText())
                    .startsWith("Your request was rejected by the safety system.")
                    .contains("***.***.com");
            assertThat(error.has("moderation_details")).isFalse();
            assertThat(gateway.imageCalls().get(0).billedUnits()).isEqualTo(20_000);
        }
    }

    /** The silent failures (gateway contract §5): 200, billed, result differs from intent. */
    @Nested
    class SilentFailures {

        @Test
        void turnsARatioAliasInto2048Square() {
            HttpResponse<String> response = http.generate(generation(",\"size\":\"16:9\""));
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(TestImages.decodedSize(SimulatorHttp.b64Image(response))).containsExactly(2048, 2048);
            assertThat(gateway.imageCalls().get(0).silentChanges()).containsExactly(SilentChange.RATIO_ALIAS_TO_2048);
            assertThat(gateway.imageCalls().get(0).billed()).isTrue();
        }

        @Test
        void collapsesAnOmittedSizeTo1024Square() {
            HttpResponse<String> response = http.generate(generation(""));
            assertThat(TestImages.decodedSize(SimulatorHttp.b64Image(response))).containsExactly(1024, 1024);
            RecordedCall call = gateway.imageCalls().get(0);
            assertThat(call.requestedSize()).isNull();
            assertThat(call.outputSize()).isEqualTo("1024x1024");
            assertThat(call.silentChanges()).containsExactly(SilentChange.SIZE_DEFAULTED);
        }

        @Test
        void producesOneImageForNButBillsNTimes() {
            HttpResponse<String> response = http.generate(generation(",\"size\":\"1024x1024\",\"n\":3"));
            assertThat(json(response).path("data")).hasSize(1);
            RecordedCall call = gateway.imageCalls().get(0);
            assertThat(call.forbiddenFields()).containsExactly("n");
            assertThat(call.n()).isEqualTo(3);
            assertThat(call.billedUnits()).isEqualTo(60_000);
            assertThat(call.silentChanges()).contains(SilentChange.N_IGNORED);
            assertThat(gateway.control().billedUnits()).isEqualTo(60_000);
        }

        @Test
        void acceptsAndIgnoresModerationAndStillBillsABlockedRequest() {
            HttpResponse<String> accepted = http.generate(generation(",\"size\":\"1024x1024\",\"moderation\":\"low\""));
            HttpResponse<String> blocked = http.generate(
                    "{\"model\":\"gpt-image-2\",\"prompt\":\"[[moderate]] nude\",\"moderation\":\"low\"}");

            assertThat(accepted.statusCode()).isEqualTo(200);
            assertThat(blocked.statusCode()).isEqualTo(400);
            assertThat(gateway.imageCalls()).allSatisfy(c -> {
                assertThat(c.forbiddenFields()).containsExactly("moderation");
                assertThat(c.billed()).isTrue();
            });
            assertThat(gateway.imageCalls().get(0).silentChanges()).containsExactly(SilentChange.MODERATION_IGNORED);
        }

        @ParameterizedTest
        @CsvSource(
                delimiter = '|',
                quoteCharacter = '"',
                value = {
                    "1666x2514 | Width and height must both be divisible by 16.",
                    "3840x1024 | The aspect ratio must be between 1:3 and 3:1.",
                    "4608x1536 | The longest edge must be at most 3840 pixels.",
                    "512x512   | The total number of pixels must be between 655360 and 8294400.",
                    "3840x2400 | The total number of pixels must be between 655360 and 8294400.",
                    "big       | Expected WIDTHxHEIGHT, for example '1824x1024'."
                })
        void rejectsASizeBreakingAHardLimit(String size, String reason) {
            HttpResponse<String> response = http.generate(generation(",\"size\":\"" + size + "\""));
            assertThat(response.statusCode()).isEqualTo(400);
            JsonNode error = json(response).path("error");
            assertThat(error.path("message").asText()).isEqualTo("Invalid size '" + size + "'. " + reason);
            assertThat(error.path("code").asText()).isEqualTo("invalid_value");
            assertThat(error.path("param").asText()).isEqualTo("size");
            assertThat(gateway.imageCalls().get(0).billed()).isFalse();
        }

        @Test
        void silentlyChangesASizeBreakingAHardLimitWhenSoConfigured() {
            gateway.control().update(s -> s.withOversizeMode(OversizeMode.SILENTLY_CHANGE));
            HttpResponse<String> response = http.generate(generation(",\"size\":\"4608x1536\""));

            assertThat(response.statusCode()).isEqualTo(200);
            int[] size = TestImages.decodedSize(SimulatorHttp.b64Image(response));
            assertThat(size).isNotEqualTo(new int[] {4608, 1536});
            assertThat(SizeRules.valid(new SizeRules.Size(size[0], size[1]))).isTrue();
            RecordedCall call = gateway.imageCalls().get(0);
            assertThat(call.outputSize()).isEqualTo(size[0] + "x" + size[1]);
            assertThat(call.silentChanges()).containsExactly(SilentChange.SIZE_CHANGED);
            assertThat(call.billed()).isTrue();
        }

        @Test
        void acceptsEveryPreparedSizeOfTheSpecUnchanged() {
            for (String size : List.of(
                    "1024x1024",
                    "1024x1536",
                    "1536x1024",
                    "1536x864",
                    "864x1536",
                    "1536x1152",
                    "1152x1536",
                    "1232x1536",
                    "1536x1232",
                    "2048x2048",
                    "2048x1152",
                    "1152x2048",
                    "3840x2160",
                    "2160x3840")) {
                assertThat(http.generate(generation(",\"size\":\"" + size + "\""))
                                .statusCode())
                        .as(size)
                        .isEqualTo(200);
            }
            assertThat(gateway.imageCalls())
                    .allSatisfy(c -> assertThat(c.outputSize()).isEqualTo(c.requestedSize()));
        }
    }

    @Nested
    class Billing {

        @Test
        void billsThePricePerCallOnEverySuccess() {
            long before = gateway.control().quotaRemaining();
            http.generate(generation(""));
            http.generate(generation(""));
            assertThat(gateway.control().quotaRemaining()).isEqualTo(before - 40_000);
            assertThat(gateway.imageCalls())
                    .allSatisfy(c -> assertThat(c.billedUnits()).isEqualTo(20_000));
        }

        @Test
        void doesNotBillCallsRefusedByTokenRouteOrCap() {
            gateway.control().setConcurrencyCap(1, 0).setLatency(Duration.ofMillis(400));
            CompletableFuture<HttpResponse<String>> first =
                    http.postJsonAsync(GatewayRoutes.GENERATIONS, generation(""));
            await().until(() -> gateway.imageCallsInFlight() == 1);
            assertThat(http.generate(generation("")).statusCode()).isEqualTo(429);
            assertThat(http.postJson(GatewayRoutes.GENERATIONS, "sk-wrong", generation(""))
                            .statusCode())
                    .isEqualTo(401);
            assertThat(http.postJson("/v1/v1/images/generations", generation(""))
                            .statusCode())
                    .isEqualTo(404);
            assertThat(first.join().statusCode()).isEqualTo(200);

            assertThat(gateway.calls())
                    .filteredOn(RecordedCall::billed)
                    .singleElement()
                    .satisfies(c -> assertThat(c.status()).isEqualTo(200));
            assertThat(gateway.control().billedUnits()).isEqualTo(20_000);
        }

        @Test
        void answers401OnceTheQuotaIsExhausted() {
            gateway.control().setQuotaRemaining(30_000);
            assertThat(http.generate(generation("")).statusCode()).isEqualTo(200);
            assertThat(http.generate(generation("")).statusCode()).isEqualTo(200);
            assertThat(gateway.control().quotaRemaining()).isEqualTo(-10_000);

            HttpResponse<String> refused = http.generate(generation(""));
            assertThat(refused.statusCode()).isEqualTo(401);
            assertThat(json(refused).path("error").path("message").asText()).startsWith("Invalid token (request id:");
            assertThat(http.postJson("/v1/chat/completions", "{}").statusCode()).isEqualTo(401);
        }

        @Test
        void answers401ToATokenWithNoQuotaLeft() {
            gateway.control().setQuotaRemaining(0);
            assertThat(http.generate(generation("")).statusCode()).isEqualTo(401);
        }

        @Test
        void neverRunsOutWithUnlimitedQuota() {
            gateway.control().setUnlimitedQuota().update(s -> s.withPricePerCall(10_000_000));
            assertThat(http.generate(generation("")).statusCode()).isEqualTo(200);
            assertThat(http.generate(generation("")).statusCode()).isEqualTo(200);
            assertThat(gateway.control().billedUnits()).isEqualTo(20_000_000);
        }
    }

    @Nested
    class Concurrency {

        @Test
        void answers429WithRetryAfterAboveTheCap() {
            gateway.control().setConcurrencyCap(2, 3).setLatency(Duration.ofMillis(500));
            List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                calls.add(http.postJsonAsync(GatewayRoutes.GENERATIONS, generation("")));
            }
            await().until(() -> gateway.imageCallsInFlight() == 2);
            HttpResponse<String> third = http.generate(generation(""));

            assertThat(third.statusCode()).isEqualTo(429);
            assertThat(third.headers().firstValue("Retry-After")).hasValue("3");
            assertThat(third.body()).isEmpty();
            assertThat(calls).allSatisfy(c -> assertThat(c.join().statusCode()).isEqualTo(200));
            assertThat(gateway.imageCalls())
                    .extracting(RecordedCall::concurrencyAtArrival)
                    .containsExactlyInAnyOrder(1, 2, 3);
            assertThat(gateway.maxConcurrentImageCalls()).isEqualTo(3);
        }

        @Test
        void answers429WithoutRetryAfterWhenNoneIsConfigured() {
            gateway.control().setConcurrencyCap(1, 0).setLatency(Duration.ofMillis(400));
            CompletableFuture<HttpResponse<String>> first =
                    http.postJsonAsync(GatewayRoutes.GENERATIONS, generation(""));
            await().until(() -> gateway.imageCallsInFlight() == 1);
            HttpResponse<String> second = http.generate(generation(""));
            assertThat(second.statusCode()).isEqualTo(429);
            assertThat(second.headers().firstValue("Retry-After")).isEmpty();
            assertThat(first.join().statusCode()).isEqualTo(200);
        }

        @Test
        void servesHundredsOfConcurrentCallsWithTimersAndReportsThePeak() {
            gateway.control().setLatency(Duration.ofMillis(700));
            List<CompletableFuture<HttpResponse<String>>> calls = IntStream.range(0, 200)
                    .mapToObj(i -> http.postJsonAsync(GatewayRoutes.GENERATIONS, generation(",\"size\":\"1536x1024\"")))
                    .toList();
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).join();

            assertThat(calls).allSatisfy(c -> assertThat(c.join().statusCode()).isEqualTo(200));
            assertThat(gateway.imageCalls()).hasSize(200);
            assertThat(gateway.maxConcurrentImageCalls()).isGreaterThan(100);
            assertThat(gateway.imageCallsInFlight()).isZero();
        }

        @Test
        void drawsAUniformLatencyPerCall() {
            gateway.control().setLatency(Latency.uniform(Duration.ofMillis(100), Duration.ofMillis(300)));
            for (int i = 0; i < 5; i++) {
                http.generate(generation(""));
            }
            assertThat(gateway.imageCalls()).allSatisfy(c -> assertThat(Duration.between(c.arrivedAt(), c.finishedAt()))
                    .isBetween(Duration.ofMillis(95), Duration.ofMillis(1_000)));
        }
    }

    @Nested
    class Records {

        @Test
        void recordsEveryCallInArrivalOrderWithItsFields() {
            http.generate("{\"model\":\"gpt-image-2\",\"prompt\":\"first\",\"size\":\"1536x1024\",\"n\":2,"
                    + "\"moderation\":\"low\",\"quality\":\"high\"}");
            http.postJson("/v1/foo", "{}");
            http.generate("{\"model\":\"gpt-image-2\",\"prompt\":\"third\"}");

            List<RecordedCall> calls = gateway.calls();
            assertThat(calls).extracting(RecordedCall::sequence).containsExactly(1L, 2L, 3L);
            assertThat(calls)
                    .extracting(RecordedCall::route)
                    .containsExactly("POST /v1/images/generations", "POST /v1/foo", "POST /v1/images/generations");
            RecordedCall first = calls.get(0);
            assertThat(first.textFields())
                    .containsExactly(
                            Map.entry("model", "gpt-image-2"),
                            Map.entry("prompt", "first"),
                            Map.entry("size", "1536x1024"),
                            Map.entry("n", "2"),
                            Map.entry("moderation", "low"),
                            Map.entry("quality", "high"));
            assertThat(first.forbiddenFields()).containsExactly("n", "moderation");
            assertThat(first.fileParts()).isEmpty();
            assertThat(first.fault()).isNull();
            assertThat(first.concurrencyAtArrival()).isEqualTo(1);
            assertThat(first.finishedAt()).isAfterOrEqualTo(first.arrivedAt());
            assertThat(calls.get(1).concurrencyAtArrival()).isZero();
            assertThat(gateway.imageCalls()).extracting(RecordedCall::sequence).containsExactly(1L, 3L);
        }

        @Test
        void resetClearsRecordsFaultsPeakAndRestoresTheStartSettings() {
            gateway.control()
                    .setLatency(Duration.ofMillis(50))
                    .setResponseForm(ResponseForm.URL)
                    .setQuotaRemaining(0)
                    .revokeToken()
                    .injectFault(Fault.hang())
                    .holdImageCallsAfter(0);
            gateway.reset();

            assertThat(gateway.calls()).isEmpty();
            assertThat(gateway.control().pendingFaults()).isEmpty();
            assertThat(gateway.control().settings())
                    .isEqualTo(SimulatorSettings.defaults().withApiKey(gateway.validApiKey()));
            assertThat(gateway.maxConcurrentImageCalls()).isZero();
            assertThat(http.generate(generation("")).statusCode()).isEqualTo(200);
        }
    }
}
