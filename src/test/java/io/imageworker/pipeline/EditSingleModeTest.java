package io.imageworker.pipeline;

import static io.imageworker.pipeline.EditPipelineTest.edit;
import static io.imageworker.pipeline.EditPipelineTest.inline;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.testing.FileParts;
import io.imageworker.testing.StoreProxyTestResource;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.images.TestImages;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * {@code IMAGE_WORKER_GATEWAY_EDIT_MODE=single} ({@link OptInProfile}), end to end: for a gateway that does not
 * honour {@code image[]}, only the base image is sent, as {@code image}; the mask still goes as {@code mask}.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@TestProfile(OptInProfile.class)
@WithTestResource(StoreProxyTestResource.class)
class EditSingleModeTest extends PipelineTestSupport {

    @Test
    void sendsOnlyTheBaseImageAsImage() {
        String id = newId("single");
        byte[] base = TestImages.jpeg(1536, 1024);
        send(edit(
                id,
                "\"mask\":" + inline(TestImages.png(1536, 1024), "image/png"),
                inline(base, "image/png"),
                inline(TestImages.png(640, 480), "image/png"),
                inline(TestImages.webp(800, 600), "image/webp")));

        ConsumerRecord<byte[], byte[]> record = result(id);
        JsonNode event = body(record);

        assertThat(record.topic()).isEqualTo("image-completed");
        assertThat(event.path("size").path("sent").asText()).isEqualTo("1536x1024");
        List<RecordedCall> calls = callsFor(id);
        assertThat(calls).hasSize(1);
        RecordedCall call = calls.get(0);
        assertThat(call.fileParts())
                .extracting(FileParts::upload)
                .containsExactly(
                        tuple("image", "image.jpg", "image/jpeg", "image/jpeg", true),
                        tuple("mask", "mask.png", "image/png", "image/png", true));
        assertThat(call.fileParts().get(0).byteLength()).isEqualTo(base.length);
        assertThat(call.silentChanges()).isEmpty();
    }

    @Test
    void stillRefusesAReferenceItWouldNotSend() {
        String id = newId("singlegif");
        send(edit(
                id, "", inline(TestImages.png(1024, 1024), "image/png"), inline(TestImages.gif(32, 32), "image/png")));

        JsonNode event = body(result(id));

        assertThat(event.path("error").path("code").asText()).isEqualTo("INVALID_REFERENCE");
        assertThat(event.path("error").path("message").asText()).startsWith("references[1]: is a GIF file");
        assertThat(callsFor(id)).isEmpty();
    }
}
