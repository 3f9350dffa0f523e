package io.imageworker.testing.images;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import javax.imageio.ImageIO;

/**
 * Real, small image files made in memory, for any test that needs image bytes: PNG, JPEG, GIF and BMP through the JDK's
 * {@link ImageIO} writers; WebP (which the JDK cannot write) and the EXIF orientation block built by hand from their
 * specifications, as documented on each method. And what tests ask of image bytes: their size as ImageIO decodes
 * them, and their SHA-256.
 */
public final class TestImages {

    private TestImages() {}

    /** A PNG of {@code width} x {@code height} pixels. */
    public static byte[] png(int width, int height) {
        return write(picture(width, height, BufferedImage.TYPE_INT_ARGB), "png");
    }

    /** A baseline JFIF JPEG of {@code width} x {@code height} pixels, without EXIF. */
    public static byte[] jpeg(int width, int height) {
        return write(picture(width, height, BufferedImage.TYPE_INT_RGB), "jpeg");
    }

    /**
     * A JPEG of {@code width} x {@code height} stored pixels carrying EXIF orientation {@code orientation}: an
     * {@link #jpeg} with an APP1 Exif segment (see {@link #exifOrientationTiff}) inserted right after the SOI marker.
     */
    public static byte[] jpegWithOrientation(int width, int height, int orientation) {
        byte[] jpeg = jpeg(width, height);
        byte[] tiff = exifOrientationTiff(orientation);
        byte[] preamble = "Exif\0\0".getBytes(StandardCharsets.US_ASCII);
        // APP1 marker FF E1, then a big-endian length that counts itself (2 bytes), the preamble and the TIFF block.
        ByteBuffer app1 = ByteBuffer.allocate(4 + preamble.length + tiff.length).order(ByteOrder.BIG_ENDIAN);
        app1.put((byte) 0xFF).put((byte) 0xE1).putShort((short) (2 + preamble.length + tiff.length));
        app1.put(preamble).put(tiff);
        ByteBuffer out = ByteBuffer.allocate(jpeg.length + app1.capacity());
        out.put(jpeg, 0, 2); // SOI: FF D8
        out.put(app1.array());
        out.put(jpeg, 2, jpeg.length - 2);
        return out.array();
    }

    /**
     * A lossless WebP in the simple format of {@code width} x {@code height} pixels (1 to 16384), all one opaque red.
     *
     * <p>Built from Google's "WebP Container Specification" (RIFF header, chunk {@code VP8L}) and "WebP Lossless
     * Bitstream Specification" (header: signature {@code 0x2F}, 14-bit width - 1, 14-bit height - 1, alpha hint, 3-bit
     * version 0; then no transform, no color cache, no meta prefix codes, and five "simple" prefix codes of a single
     * symbol each, for green, red, blue, alpha and distance). A one-symbol code takes zero bits per pixel, so the pixel
     * data is empty and the file is 30 bytes whatever its size.
     */
    public static byte[] webp(int width, int height) {
        return riffWebp(chunk("VP8L", vp8l(width, height)));
    }

    /**
     * A lossless WebP in the extended format: a {@code VP8X} chunk (flag EXIF, canvas {@code width} x {@code height}),
     * the {@code VP8L} image of {@link #webp}, then an {@code EXIF} chunk holding the TIFF block of {@link
     * #exifOrientationTiff} (the WebP container puts the TIFF block directly, without JPEG's {@code Exif\0\0}).
     */
    public static byte[] webpWithOrientation(int width, int height, int orientation) {
        checkWebpSize(width, height);
        ByteBuffer vp8x = ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN);
        vp8x.put((byte) 0x08); // flags: EXIF metadata present
        vp8x.put(new byte[3]); // reserved
        putUInt24(vp8x, width - 1); // canvas width minus one
        putUInt24(vp8x, height - 1); // canvas height minus one
        return riffWebp(
                chunk("VP8X", vp8x.array()),
                chunk("VP8L", vp8l(width, height)),
                chunk("EXIF", exifOrientationTiff(orientation)));
    }

    /** A GIF of {@code width} x {@code height} pixels: a real image in a format the gateway does not take. */
    public static byte[] gif(int width, int height) {
        return write(picture(width, height, BufferedImage.TYPE_BYTE_INDEXED), "gif");
    }

    /** A BMP of {@code width} x {@code height} pixels: a real image in a format the gateway does not take. */
    public static byte[] bmp(int width, int height) {
        return write(picture(width, height, BufferedImage.TYPE_INT_RGB), "bmp");
    }

    /**
     * A minimal big-endian TIFF block (TIFF 6.0, section 2) holding one IFD with one entry, Orientation (tag
     * {@code 0x0112}, type SHORT, count 1) = {@code orientation}: 26 bytes, as an EXIF reader expects it.
     */
    public static byte[] exifOrientationTiff(int orientation) {
        ByteBuffer tiff = ByteBuffer.allocate(26).order(ByteOrder.BIG_ENDIAN);
        tiff.put((byte) 'M').put((byte) 'M').putShort((short) 42).putInt(8); // byte order, magic, first IFD at 8
        tiff.putShort((short) 1); // one entry
        tiff.putShort((short) 0x0112).putShort((short) 3).putInt(1); // Orientation, SHORT, count 1
        tiff.putShort((short) orientation).putShort((short) 0); // value, left-justified in the 4-byte field
        tiff.putInt(0); // no next IFD
        return tiff.array();
    }

    /** {@code {width, height}} of an image as ImageIO decodes it. */
    public static int[] decodedSize(byte[] image) {
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

    /** The SHA-256 of {@code bytes} as 64 lower-case hex digits, computed here rather than by the worker's code. */
    public static String sha256(byte[] bytes) {
        return sha256(new ByteArrayInputStream(bytes));
    }

    /** The SHA-256 of what {@code in} holds, read to its end, as 64 lower-case hex digits. */
    public static String sha256(InputStream in) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[64 * 1024];
            for (int read; (read = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, read);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static BufferedImage picture(int width, int height, int type) {
        BufferedImage image = new BufferedImage(width, height, type);
        Graphics2D g = image.createGraphics();
        try {
            // Two colours, so an accidental transpose or crop would be visible to anyone who looks.
            g.setColor(Color.ORANGE);
            g.fillRect(0, 0, width, height);
            g.setColor(Color.BLUE);
            g.fillRect(0, 0, Math.max(1, width / 2), Math.max(1, height / 4));
        } finally {
            g.dispose();
        }
        return image;
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

    private static byte[] vp8l(int width, int height) {
        checkWebpSize(width, height);
        BitWriter bits = new BitWriter();
        bits.write(0x2F, 8); // signature
        bits.write(width - 1, 14);
        bits.write(height - 1, 14);
        bits.write(0, 1); // alpha_is_used: a hint only; every pixel is opaque
        bits.write(0, 3); // version
        bits.write(0, 1); // no transform
        bits.write(0, 1); // no color cache
        bits.write(0, 1); // no meta prefix codes: one prefix code group for the whole image
        simpleCode(bits, 0); // green (and LZ77 lengths, cache): literal green 0
        simpleCode(bits, 255); // red
        simpleCode(bits, 0); // blue
        simpleCode(bits, 255); // alpha
        simpleCode(bits, 0); // distance: never used
        return bits.toBytes();
    }

    /** A "simple code length code" with one symbol: is_simple 1, num_symbols - 1 = 0, is_first_8bits, symbol. */
    private static void simpleCode(BitWriter bits, int symbol) {
        bits.write(1, 1);
        bits.write(0, 1);
        if (symbol < 2) {
            bits.write(0, 1);
            bits.write(symbol, 1);
        } else {
            bits.write(1, 1);
            bits.write(symbol, 8);
        }
    }

    private static void checkWebpSize(int width, int height) {
        if (width < 1 || height < 1 || width > 16384 || height > 16384) {
            throw new IllegalArgumentException("a lossless WebP is 1 to 16384 pixels a side");
        }
    }

    /** A RIFF chunk: four-character code, little-endian payload size, payload, a pad byte when the size is odd. */
    private static byte[] chunk(String fourCc, byte[] payload) {
        int padded = payload.length + (payload.length & 1);
        ByteBuffer chunk = ByteBuffer.allocate(8 + padded).order(ByteOrder.LITTLE_ENDIAN);
        chunk.put(fourCc.getBytes(StandardCharsets.US_ASCII))
                .putInt(payload.length)
                .put(payload);
        return chunk.array();
    }

    /** {@code RIFF}, the size of everything after this field, {@code WEBP}, then the chunks. */
    private static byte[] riffWebp(byte[]... chunks) {
        int size = 4;
        for (byte[] c : chunks) {
            size += c.length;
        }
        ByteBuffer file = ByteBuffer.allocate(8 + size).order(ByteOrder.LITTLE_ENDIAN);
        file.put("RIFF".getBytes(StandardCharsets.US_ASCII)).putInt(size);
        file.put("WEBP".getBytes(StandardCharsets.US_ASCII));
        for (byte[] c : chunks) {
            file.put(c);
        }
        return file.array();
    }

    private static void putUInt24(ByteBuffer buffer, int value) {
        buffer.put((byte) value).put((byte) (value >>> 8)).put((byte) (value >>> 16));
    }

    /** Packs values least significant bit first, as the VP8L bit reader reads them. */
    private static final class BitWriter {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private int current;
        private int used;

        void write(int value, int count) {
            for (int i = 0; i < count; i++) {
                current |= ((value >>> i) & 1) << used;
                if (++used == 8) {
                    out.write(current);
                    current = 0;
                    used = 0;
                }
            }
        }

        byte[] toBytes() {
            if (used > 0) {
                out.write(current);
                current = 0;
                used = 0;
            }
            return out.toByteArray();
        }
    }
}
