package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.image.ImageInspector;
import io.imageworker.testing.WorkerTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** With presigning on ({@link OptInProfile}), image-completed carries a GET URL of the stored object (never the gateway's URL). */
@QuarkusTest
@TestProfile(OptInProfile.class)
@WithTestResource(WorkerTestResource.class)
class PresignedUrlTest extends PipelineTestSupport {

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
}
