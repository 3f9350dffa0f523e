package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.image.ImageInspector;
import io.imageworker.testing.StoreProxyTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * With presigning on ({@link OptInProfile}), image-completed carries a GET URL of the stored object (never the gateway's
 * URL); the unauthenticated status endpoint gives it only when {@code IMAGE_WORKER_STATUS_PRESIGNED_URLS} says so (off
 * by default, as here).
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@TestProfile(OptInProfile.class)
@WithTestResource(StoreProxyTestResource.class)
class PresignedUrlTest extends PipelineTestSupport {

    @TestHTTPResource("/requests/")
    URI requests;

    @Test
    void putsAPresignedUrlOfTheStoredImageInTheEvent() throws Exception {
        String id = newId("presign");
        send(request(id, ""));

        JsonNode image = body(result(id)).path("image");
        String url = image.path("url").asText();

        assertThat(url).contains("/images/images/" + id + ".png").contains("X-Amz-Expires=600");
        HttpResponse<byte[]> download = HttpClient.newHttpClient()
                .send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(download.statusCode()).isEqualTo(200);
        assertThat(ImageInspector.sha256Hex(download.body()))
                .isEqualTo(image.path("sha256").asText());
    }

    /** Whoever reaches the endpoint and knows an id reads where the image is, not the image itself. */
    @Test
    void theStatusEndpointGivesNoPresignedUrlByDefault() throws Exception {
        String id = newId("presign-status");
        send(request(id, ""));
        JsonNode image = body(result(id)).path("image");
        assertThat(image.path("url").asText()).contains("X-Amz-Signature");

        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(HttpRequest.newBuilder(requests.resolve(id)).build(), HttpResponse.BodyHandlers.ofString());

        JsonNode status = JSON.readTree(response.body());
        assertThat(status.path("status").asText()).isEqualTo("completed");
        assertThat(status.path("image").has("url")).isFalse();
        assertThat(status.path("image").path("uri").asText())
                .isEqualTo(image.path("uri").asText());
        assertThat(status.path("image").path("sha256").asText())
                .isEqualTo(image.path("sha256").asText());
        assertThat(response.body()).doesNotContain("X-Amz-Signature");
    }
}
