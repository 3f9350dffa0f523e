package io.imageworker.testing.gateway;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import javax.imageio.ImageIO;

/** Small real images of each format, for upload tests. */
final class ImageFixtures {

    private ImageFixtures() {}

    static byte[] png(int width, int height) {
        return PngEncoder.solid(width, height, 0x336699);
    }

    static byte[] jpeg(int width, int height) {
        return write(new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB), "jpeg");
    }

    static byte[] gif(int width, int height) {
        return write(new BufferedImage(width, height, BufferedImage.TYPE_BYTE_INDEXED), "gif");
    }

    /** A lossless WebP header (RIFF, VP8L) with the given size; enough for type and size sniffing. */
    static byte[] webp(int width, int height) {
        ByteBuffer b = ByteBuffer.allocate(30).order(ByteOrder.LITTLE_ENDIAN);
        b.put("RIFF".getBytes())
                .putInt(22)
                .put("WEBP".getBytes())
                .put("VP8L".getBytes())
                .putInt(10);
        b.put((byte) 0x2F);
        int bits = (width - 1) | (height - 1) << 14;
        b.putInt(bits);
        return b.array();
    }

    /** {@code {width, height}} as ImageIO decodes them. */
    static int[] decodedSize(byte[] image) {
        try {
            BufferedImage decoded = ImageIO.read(new ByteArrayInputStream(image));
            if (decoded == null) {
                throw new IllegalArgumentException("ImageIO cannot read these bytes");
            }
            return new int[] {decoded.getWidth(), decoded.getHeight()};
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] write(BufferedImage image, String format) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            if (!ImageIO.write(image, format, out)) {
                throw new IllegalStateException("no ImageIO writer for " + format);
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
