package io.imageworker.testing.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;

/**
 * Real, cheap PNG files: one colour, 8-bit RGB, one {@code IDAT}. Each row is filter byte 0 plus identical pixels,
 * so even 3840x2160 deflates to a few tens of kilobytes. Usable by any test that needs an image of a known size.
 */
public final class PngEncoder {

    private static final byte[] SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    private static final int CACHE_LIMIT = 256;
    private static final Map<Long, byte[]> CACHE = new ConcurrentHashMap<>();

    /** The simulator's output colour, a calm grey-blue. */
    public static final int DEFAULT_RGB = 0x5A7D9A;

    private PngEncoder() {}

    /** A PNG of this size in {@link #DEFAULT_RGB}, cached per size. The array is shared: do not modify it. */
    public static byte[] cached(int width, int height) {
        long key = (long) width << 32 | height;
        byte[] png = CACHE.get(key);
        if (png == null) {
            if (CACHE.size() >= CACHE_LIMIT) {
                CACHE.clear();
            }
            png = solid(width, height, DEFAULT_RGB);
            CACHE.put(key, png);
        }
        return png;
    }

    /** A PNG of {@code width}x{@code height} filled with {@code rgb} ({@code 0xRRGGBB}). */
    public static byte[] solid(int width, int height, int rgb) {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException("size must be positive: " + width + "x" + height);
        }
        ByteBuffer header = ByteBuffer.allocate(13);
        header.putInt(width).putInt(height);
        header.put((byte) 8); // bit depth
        header.put((byte) 2); // colour type: truecolour RGB
        header.put((byte) 0).put((byte) 0).put((byte) 0); // deflate, adaptive filtering, no interlace

        byte[] row = new byte[1 + 3 * width];
        for (int x = 0; x < width; x++) {
            row[1 + 3 * x] = (byte) (rgb >> 16);
            row[2 + 3 * x] = (byte) (rgb >> 8);
            row[3 + 3 * x] = (byte) rgb;
        }
        ByteArrayOutputStream idat = new ByteArrayOutputStream();
        Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION);
        try (DeflaterOutputStream out = new DeflaterOutputStream(idat, deflater, 1 << 16)) {
            for (int y = 0; y < height; y++) {
                out.write(row);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            deflater.end();
        }

        ByteArrayOutputStream png = new ByteArrayOutputStream(idat.size() + 64);
        png.writeBytes(SIGNATURE);
        chunk(png, "IHDR", header.array());
        chunk(png, "IDAT", idat.toByteArray());
        chunk(png, "IEND", new byte[0]);
        return png.toByteArray();
    }

    private static void chunk(ByteArrayOutputStream out, String type, byte[] data) {
        byte[] typeBytes = type.getBytes(StandardCharsets.US_ASCII);
        CRC32 crc = new CRC32();
        crc.update(typeBytes);
        crc.update(data);
        out.writeBytes(ByteBuffer.allocate(4).putInt(data.length).array());
        out.writeBytes(typeBytes);
        out.writeBytes(data);
        out.writeBytes(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
    }
}
