package io.imageworker.testing.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** A plain {@link HttpClient} aimed at a running simulator, for the simulator's own tests. */
final class SimulatorHttp {

    static final ObjectMapper JSON = new ObjectMapper();
    static final Duration TIMEOUT = Duration.ofSeconds(10);

    final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final GatewaySimulator simulator;

    SimulatorHttp(GatewaySimulator simulator) {
        this.simulator = simulator;
    }

    HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(simulator.baseUrl() + path)).timeout(TIMEOUT);
    }

    HttpRequest.Builder authorized(String path) {
        return request(path).header("Authorization", "Bearer " + simulator.validApiKey());
    }

    /** POST JSON with the valid key. */
    HttpResponse<String> postJson(String path, String json) {
        return postJson(path, simulator.validApiKey(), json);
    }

    /** POST JSON with {@code key} ({@code null}: no Authorization header). */
    HttpResponse<String> postJson(String path, String key, String json) {
        return send(jsonRequest(path, key, json));
    }

    HttpRequest jsonRequest(String path, String key, String json) {
        HttpRequest.Builder builder = request(path)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (key != null) {
            builder.header("Authorization", "Bearer " + key);
        }
        return builder.build();
    }

    CompletableFuture<HttpResponse<String>> postJsonAsync(String path, String json) {
        return client.sendAsync(jsonRequest(path, simulator.validApiKey(), json), HttpResponse.BodyHandlers.ofString());
    }

    /** POST a generation with the valid key. */
    HttpResponse<String> generate(String json) {
        return postJson(GatewayRoutes.GENERATIONS, json);
    }

    /** POST a multipart body to the edits route with the valid key. */
    HttpResponse<String> edit(Multipart form) {
        return postMultipart(GatewayRoutes.EDITS, simulator.validApiKey(), form);
    }

    HttpResponse<String> postMultipart(String path, String key, Multipart form) {
        HttpRequest.Builder builder = request(path)
                .header("Content-Type", form.contentType())
                .POST(HttpRequest.BodyPublishers.ofByteArray(form.body()));
        if (key != null) {
            builder.header("Authorization", "Bearer " + key);
        }
        return send(builder.build());
    }

    HttpResponse<String> get(String path, String key) {
        HttpRequest.Builder builder = request(path).GET();
        if (key != null) {
            builder.header("Authorization", "Bearer " + key);
        }
        return send(builder.build());
    }

    HttpResponse<String> send(HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    HttpResponse<byte[]> download(String url) {
        try {
            return client.send(
                    HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static JsonNode json(HttpResponse<String> response) {
        try {
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code error.message} of an error answer. */
    static String errorMessage(HttpResponse<String> response) {
        return json(response).path("error").path("message").asText();
    }

    /** The image bytes of a {@code b64_json} success. */
    static byte[] b64Image(HttpResponse<String> response) {
        return java.util.Base64.getDecoder()
                .decode(json(response).path("data").path(0).path("b64_json").asText());
    }
}
