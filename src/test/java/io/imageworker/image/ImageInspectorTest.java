package io.imageworker.image;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.images.TestImages;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.DeflaterOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ImageInspectorTest {

    @Test
    void readsARealPng() {
        ImageInfo info = ImageInspector.inspect(TestImages.png(640, 480));

        assertThat(info).isEqualTo(new ImageInfo(ImageFormat.PNG, size(640, 480), 1, "PNG"));
        assertThat(info.isUsable()).isTrue();
        assertThat(info.refusal()).isEmpty();
    }

    @Test
    void readsARealJpeg() {
        ImageInfo info = ImageInspector.inspect(TestImages.jpeg(300, 200));

        assertThat(info).isEqualTo(new ImageInfo(ImageFormat.JPEG, size(300, 200), 1, "JPEG"));
        assertThat(info.isUsable()).isTrue();
    }

    @Test
    void readsALosslessWebp() {
        assertThat(ImageInspector.inspect(TestImages.webp(1, 1)))
                .isEqualTo(new ImageInfo(ImageFormat.WEBP, size(1, 1), 1, "WebP"));
        assertThat(ImageInspector.inspect(TestImages.webp(1536, 864)).size()).isEqualTo(size(1536, 864));
    }

    @Test
    void readsAnExtendedWebpWithItsCanvasAndOrientation() {
        ImageInfo info = ImageInspector.inspect(TestImages.webpWithOrientation(300, 200, 8));

        assertThat(info).isEqualTo(new ImageInfo(ImageFormat.WEBP, size(300, 200), 8, "WebP"));
        assertThat(info.displaySize()).isEqualTo(size(200, 300));
    }

    @Test
    void readsTheExifOrientationOfAJpeg() {
        ImageInfo info = ImageInspector.inspect(TestImages.jpegWithOrientation(400, 300, 6));

        assertThat(info.format()).isEqualTo(ImageFormat.JPEG);
        assertThat(info.size()).isEqualTo(size(400, 300));
        assertThat(info.exifOrientation()).isEqualTo(6);
        assertThat(info.displaySize()).isEqualTo(size(300, 400));
    }

    @Test
    void readsEveryOrientationAndIgnoresAnInvalidOne() {
        for (int orientation = 1; orientation <= 8; orientation++) {
            assertThat(ImageInspector.inspect(TestImages.jpegWithOrientation(64, 32, orientation))
                            .exifOrientation())
                    .isEqualTo(orientation);
        }
        assertThat(ImageInspector.inspect(TestImages.jpegWithOrientation(64, 32, 0))
                        .exifOrientation())
                .isEqualTo(1);
        assertThat(ImageInspector.inspect(TestImages.jpegWithOrientation(64, 32, 42))
                        .exifOrientation())
                .isEqualTo(1);
    }

    @Test
    void readsTheOrientationOfAPngFromItsExifChunk() {
        byte[] png = withChunkAfterHeader(TestImages.png(40, 30), "eXIf", TestImages.exifOrientationTiff(6));

        ImageInfo info = ImageInspector.inspect(png);

        assertThat(info).isEqualTo(new ImageInfo(ImageFormat.PNG, size(40, 30), 6, "PNG"));
    }

    @Test
    void detectsTheFormatFromTheBytesWhateverTheNameOrDeclaredType() {
        // The inspector is never told a name or type; a producer's "photo.png" of type image/png that is really a
        // JPEG is reported as JPEG, and the extension to send is derived from that.
        byte[] jpegCalledPng = TestImages.jpeg(32, 32);
        ImageInfo info = ImageInspector.inspect(jpegCalledPng);

        assertThat(ImageFormat.fromMimeType("image/png")).contains(ImageFormat.PNG);
        assertThat(info.format()).isEqualTo(ImageFormat.JPEG);
        assertThat(info.format().extension()).isEqualTo(".jpg");
        assertThat(info.format().mimeType()).isEqualTo("image/jpeg");
    }

    @Test
    void refusesAGif() {
        ImageInfo info = ImageInspector.inspect(TestImages.gif(16, 16));

        assertThat(info.format()).isEqualTo(ImageFormat.UNSUPPORTED);
        assertThat(info.isUsable()).isFalse();
        assertThat(info.refusal()).contains("is a GIF file; only png, jpeg and webp are accepted");
    }

    @Test
    void refusesABmp() {
        ImageInfo info = ImageInspector.inspect(TestImages.bmp(16, 16));

        assertThat(info.format()).isEqualTo(ImageFormat.UNSUPPORTED);
        assertThat(info.refusal()).contains("is a BMP file; only png, jpeg and webp are accepted");
    }

    @Test
    void refusesRandomBytes() {
        Random random = new Random(42);
        for (int i = 0; i < 200; i++) {
            byte[] noise = new byte[random.nextInt(1, 4096)];
            random.nextBytes(noise);
            ImageInfo info = ImageInspector.inspect(noise);
            assertThat(info.isUsable()).as("noise %d", i).isFalse();
        }
        assertThat(ImageInspector.inspect("hello, world".getBytes(StandardCharsets.UTF_8))
                        .refusal())
                .contains("is not an image; only png, jpeg and webp are accepted");
    }

    @Test
    void refusesNothingAtAll() {
        assertThat(ImageInspector.inspect(new byte[0]).isUsable()).isFalse();
        assertThat(ImageInspector.inspect(null).isUsable()).isFalse();
    }

    @ParameterizedTest(name = "cut to {0} bytes")
    @ValueSource(ints = {1, 2, 3, 4, 8, 12, 16, 20, 24, 29, 33, 40, 60})
    void neverThrowsOnATruncatedFileAndRefusesOneCutBeforeItsSize(int length) {
        for (byte[] image : new byte[][] {
            TestImages.png(64, 48),
            TestImages.jpeg(64, 48),
            TestImages.jpegWithOrientation(64, 48, 6),
            TestImages.webp(64, 48),
            TestImages.webpWithOrientation(64, 48, 6)
        }) {
            ImageInfo info = ImageInspector.inspect(Arrays.copyOf(image, Math.min(length, image.length)));
            // Whatever the format, a size is either the right one or absent: never a made-up one.
            assertThat(info.size()).isIn(Optional.empty(), size(64, 48));
            if (info.size().isEmpty()) {
                assertThat(info.isUsable()).isFalse();
            }
        }
    }

    @Test
    void refusesAPngCutInItsImageData() {
        byte[] png = TestImages.png(200, 200);

        ImageInfo info = ImageInspector.inspect(Arrays.copyOf(png, png.length / 2));

        assertThat(info.format()).isEqualTo(ImageFormat.PNG);
        assertThat(info.isUsable()).isFalse();
        assertThat(info.refusal()).contains("looks like png but its dimensions cannot be read (damaged or truncated)");
    }

    @Test
    void doesNotAllocateWhatAChunkClaimsBeyondTheData() {
        // A WebP whose one chunk claims 2 GB, and a PNG text chunk that claims 2 GB: both are refused or read from
        // the bytes at hand, without an attempt to reserve the claimed length.
        byte[] webp = TestImages.webp(10, 10);
        ByteBuffer.wrap(webp).order(ByteOrder.LITTLE_ENDIAN).putInt(16, Integer.MAX_VALUE - 1);
        byte[] png = withChunkAfterHeader(TestImages.png(10, 10), "tEXt", new byte[16]);
        ByteBuffer.wrap(png).order(ByteOrder.BIG_ENDIAN).putInt(33, Integer.MAX_VALUE - 1);

        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();

        assertThat(ImageInspector.inspect(webp).format()).isEqualTo(ImageFormat.WEBP);
        assertThat(ImageInspector.inspect(png).format()).isEqualTo(ImageFormat.PNG);
        assertThat(threads.getCurrentThreadAllocatedBytes() - before).isLessThan(64L * 1024 * 1024);
    }

    @Test
    void doesNotInflateACompressedTextChunk() throws IOException {
        // A 130 KB PNG whose zTXt chunk inflates to 128 MiB: the library's full PNG reader would inflate it all (a
        // 25 MB file can hold tens of gigabytes this way); the inspector reads only IHDR and eXIf.
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        text.writeBytes("Comment\0\0".getBytes(StandardCharsets.ISO_8859_1)); // keyword, separator, method 0
        try (DeflaterOutputStream deflate = new DeflaterOutputStream(text)) {
            byte[] zeros = new byte[1 << 20];
            for (int i = 0; i < 128; i++) {
                deflate.write(zeros);
            }
        }
        byte[] png = withChunkAfterHeader(TestImages.png(10, 10), "zTXt", text.toByteArray());
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();

        ImageInfo info = ImageInspector.inspect(png);

        assertThat(threads.getCurrentThreadAllocatedBytes() - before).isLessThan(32L * 1024 * 1024);
        assertThat(info).isEqualTo(new ImageInfo(ImageFormat.PNG, size(10, 10), 1, "PNG"));
    }

    @Test
    void stillReportsTheSizeOfAJpegCutInItsImageData() {
        // Only headers are read, so a JPEG that ends early is not detected here; the gateway refuses it.
        byte[] jpeg = TestImages.jpeg(300, 200);

        ImageInfo info = ImageInspector.inspect(Arrays.copyOf(jpeg, jpeg.length - 100));

        assertThat(info).isEqualTo(new ImageInfo(ImageFormat.JPEG, size(300, 200), 1, "JPEG"));
    }

    @Test
    void hashesWithSha256InLowerCaseHex() {
        assertThat(ImageInspector.sha256Hex(new byte[0]))
                .isEqualTo("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assertThat(ImageInspector.sha256Hex("abc".getBytes(StandardCharsets.US_ASCII)))
                .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    @Test
    void mapsFormatsToTheirMimeTypeAndExtension() {
        assertThat(ImageFormat.PNG.mimeType()).isEqualTo("image/png");
        assertThat(ImageFormat.PNG.extension()).isEqualTo(".png");
        assertThat(ImageFormat.JPEG.mimeType()).isEqualTo("image/jpeg");
        assertThat(ImageFormat.JPEG.extension()).isEqualTo(".jpg");
        assertThat(ImageFormat.WEBP.mimeType()).isEqualTo("image/webp");
        assertThat(ImageFormat.WEBP.extension()).isEqualTo(".webp");
        assertThat(ImageFormat.UNSUPPORTED.isSupported()).isFalse();
        assertThat(ImageFormat.fromMimeType("Image/JPG; q=1")).contains(ImageFormat.JPEG);
        assertThat(ImageFormat.fromMimeType("image/gif")).isEmpty();
        assertThat(ImageFormat.fromMimeType(null)).isEmpty();
    }

    private static Optional<ImageSize> size(int width, int height) {
        return Optional.of(new ImageSize(width, height));
    }

    /** Inserts a PNG chunk (length, type, data, CRC-32 of type and data) after the 8-byte signature and 25-byte IHDR. */
    private static byte[] withChunkAfterHeader(byte[] png, String type, byte[] data) {
        byte[] typeBytes = type.getBytes(StandardCharsets.US_ASCII);
        CRC32 crc = new CRC32();
        crc.update(typeBytes);
        crc.update(data);
        ByteBuffer chunk = ByteBuffer.allocate(12 + data.length).order(ByteOrder.BIG_ENDIAN);
        chunk.putInt(data.length).put(typeBytes).put(data).putInt((int) crc.getValue());
        int afterHeader = 8 + 25;
        return ByteBuffer.allocate(png.length + chunk.capacity())
                .put(png, 0, afterHeader)
                .put(chunk.array())
                .put(png, afterHeader, png.length - afterHeader)
                .array();
    }
}
