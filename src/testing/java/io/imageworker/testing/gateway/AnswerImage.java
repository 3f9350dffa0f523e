package io.imageworker.testing.gateway;

import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32;

/**
 * An image the simulated upstream answers with, and its base64 text, both made once per size and shared by every
 * answer: a stand-in whose own CPU cost does not grow with the size of its answers (a real gateway shares no CPU with
 * the worker; a stand-in on the same machine should take no more than it is told to, see
 * {@link SimulatorSettings#cpuPerAnswer()}).
 *
 * @param png the PNG file
 * @param b64 its base64 text, as ASCII bytes
 */
record AnswerImage(byte[] png, byte[] b64) {

    private static final int CACHE_LIMIT = 64;
    private static final Map<String, AnswerImage> CACHE = new ConcurrentHashMap<>();
    private static final byte[] PADDING_TYPE = "prVt".getBytes(StandardCharsets.US_ASCII);
    private static final int CHUNK_OVERHEAD = 12;

    /** Any bytes as an answer (a fault's non-image). */
    static AnswerImage of(byte[] bytes) {
        return new AnswerImage(bytes, Base64.getEncoder().encode(bytes));
    }

    /**
     * A PNG of {@code width}x{@code height}, {@code totalBytes} long when that is larger than the smallest such PNG
     * (0: the smallest): the padding is a private ancillary chunk ({@code prVt}) of random bytes before {@code IEND},
     * which decoders skip, so the file stays a valid image of that size and does not compress.
     */
    static AnswerImage cached(int width, int height, int totalBytes) {
        String key = width + "x" + height + "/" + totalBytes;
        AnswerImage image = CACHE.get(key);
        if (image == null) {
            if (CACHE.size() >= CACHE_LIMIT) {
                CACHE.clear();
            }
            image = of(padded(PngEncoder.cached(width, height), totalBytes));
            CACHE.put(key, image);
        }
        return image;
    }

    /** {@code {"created":...,"data":[{"b64_json":"..."}]}} around the shared base64 text, without copying it. */
    Buffer b64Answer(long created) {
        byte[] prefix = ("{\"created\":" + created + ",\"data\":[{\"b64_json\":\"").getBytes(StandardCharsets.US_ASCII);
        byte[] suffix = "\"}]}".getBytes(StandardCharsets.US_ASCII);
        return Buffer.buffer(Unpooled.wrappedBuffer(prefix, b64, suffix));
    }

    private static byte[] padded(byte[] png, int totalBytes) {
        int padding = totalBytes - png.length - CHUNK_OVERHEAD;
        if (padding <= 0) {
            return png;
        }
        byte[] data = new byte[padding];
        new Random(totalBytes).nextBytes(data);
        int iend = png.length - CHUNK_OVERHEAD;
        CRC32 crc = new CRC32();
        crc.update(PADDING_TYPE);
        crc.update(data);
        ByteBuffer out = ByteBuffer.allocate(png.length + CHUNK_OVERHEAD + padding);
        out.put(png, 0, iend);
        out.putInt(padding).put(PADDING_TYPE).put(data).putInt((int) crc.getValue());
        out.put(png, iend, CHUNK_OVERHEAD);
        return out.array();
    }
}
