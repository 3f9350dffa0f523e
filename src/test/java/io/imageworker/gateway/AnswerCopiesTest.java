package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.image.ImageInfo;
import io.imageworker.image.ImageInspector;
import io.imageworker.testing.images.TestImages;
import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Random;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/**
 * The bytes one image costs on its way through the worker's own code, measured with the JVM's count of the bytes each
 * thread allocates: a 2048x2048 PNG of 9.4 MB answered as {@code b64_json} (a 12.6 MB body) is decoded into one array
 * of its size and nothing more, and inspecting and hashing it copy nothing. With the body (read into one array of
 * exactly its {@code Content-Length} by {@code support.BoundedBody}), a call holds at most the answer plus one decoded
 * copy, which is what the memory budget reserves for it.
 */
class AnswerCopiesTest {

    private static final int IMAGE_BYTES = 9_400_000;
    /** Parser state, the answer object, the hex digest: small change beside megabytes. */
    private static final long SLACK = 256 * 1024;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final AnswerClassifier classifier = new AnswerClassifier(new ObjectMapper(), 2048);

    @Test
    void aBase64AnswerIsDecodedIntoOneArrayOfTheImagesSizeAndInspectingAndHashingCopyNothing() {
        byte[] png = padded(TestImages.png(2048, 2048), IMAGE_BYTES);
        byte[] body = ("{\"created\":1,\"data\":[{\"b64_json\":\""
                        + Base64.getEncoder().encodeToString(png) + "\"}]}")
                .getBytes(StandardCharsets.US_ASCII);
        // Once to load and link the classes involved, whose allocations are not the image's.
        readAndCheck(body);

        long before = THREADS.getCurrentThreadAllocatedBytes();
        GatewayAnswer.Image answer = (GatewayAnswer.Image) classifier.classify(200, "application/json", null, body, 1);
        long decoding = THREADS.getCurrentThreadAllocatedBytes() - before;
        before = THREADS.getCurrentThreadAllocatedBytes();
        ImageInfo info = ImageInspector.inspect(answer.bytes());
        String sha256 = ImageInspector.sha256Hex(answer.bytes());
        long checking = THREADS.getCurrentThreadAllocatedBytes() - before;

        assertThat(answer.bytes()).isEqualTo(png);
        assertThat(info.size())
                .hasValueSatisfying(size -> assertThat(size.toString()).isEqualTo("2048x2048"));
        assertThat(sha256).hasSize(64);
        assertThat(decoding)
                .as("bytes allocated to read the answer")
                .isBetween((long) IMAGE_BYTES, IMAGE_BYTES + SLACK);
        assertThat(checking).as("bytes allocated to inspect and hash the image").isLessThan(SLACK);
    }

    private void readAndCheck(byte[] body) {
        GatewayAnswer.Image answer = (GatewayAnswer.Image) classifier.classify(200, "application/json", null, body, 1);
        ImageInspector.inspect(answer.bytes());
        ImageInspector.sha256Hex(answer.bytes());
    }

    /** {@code png} grown to {@code total} bytes by a private ancillary chunk of random bytes before {@code IEND}. */
    private static byte[] padded(byte[] png, int total) {
        int iend = png.length - 12;
        byte[] data = new byte[total - png.length - 12];
        new Random(7).nextBytes(data);
        byte[] type = "prVt".getBytes(StandardCharsets.US_ASCII);
        CRC32 crc = new CRC32();
        crc.update(type);
        crc.update(data);
        ByteArrayOutputStream out = new ByteArrayOutputStream(total);
        out.write(png, 0, iend);
        out.writeBytes(ByteBuffer.allocate(4).putInt(data.length).array());
        out.writeBytes(type);
        out.writeBytes(data);
        out.writeBytes(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
        out.write(png, iend, 12);
        return out.toByteArray();
    }
}
