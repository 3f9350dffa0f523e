package io.imageworker.testing.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.drew.imaging.ImageMetadataReader;
import com.drew.metadata.Metadata;
import com.drew.metadata.png.PngDirectory;
import io.imageworker.testing.images.TestImages;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The simulator's PNGs are real: right CRCs, right sizes for ImageIO and metadata-extractor. */
class GatewaySimulatorPngTest {

    @ParameterizedTest
    @CsvSource({"1024, 1024", "1536, 864", "16, 48", "2160, 3840", "3840, 2160"})
    void encodesAPngThatImageIoAndMetadataExtractorReadAtItsSize(int width, int height) throws Exception {
        byte[] png = PngEncoder.cached(width, height);

        assertThat(TestImages.decodedSize(png)).containsExactly(width, height);
        Metadata metadata = ImageMetadataReader.readMetadata(new ByteArrayInputStream(png));
        PngDirectory header = metadata.getFirstDirectoryOfType(PngDirectory.class);
        assertThat(header.getInt(PngDirectory.TAG_IMAGE_WIDTH)).isEqualTo(width);
        assertThat(header.getInt(PngDirectory.TAG_IMAGE_HEIGHT)).isEqualTo(height);
        assertThat(ImageProbe.dimensions(png)).containsExactly(width, height);
    }

    @Test
    void writesACorrectCrcForEveryChunk() {
        ByteBuffer png = ByteBuffer.wrap(PngEncoder.solid(640, 480, 0x123456));
        png.position(8);
        int chunks = 0;
        while (png.hasRemaining()) {
            int length = png.getInt();
            byte[] typeAndData = new byte[4 + length];
            png.get(typeAndData);
            CRC32 crc = new CRC32();
            crc.update(typeAndData);
            assertThat(png.getInt()).isEqualTo((int) crc.getValue());
            chunks++;
        }
        assertThat(chunks).isEqualTo(3);
    }

    @Test
    void keepsEvenA4kImageSmall() {
        assertThat(PngEncoder.cached(3840, 2160).length).isLessThan(200_000);
    }

    @Test
    void sniffsTypeAndSizeOfEachUploadFormat() {
        assertThat(ImageProbe.realType(TestImages.jpeg(33, 17))).isEqualTo(ImageProbe.JPEG);
        assertThat(ImageProbe.dimensions(TestImages.jpeg(33, 17))).containsExactly(33, 17);
        assertThat(ImageProbe.realType(TestImages.webp(800, 600))).isEqualTo(ImageProbe.WEBP);
        assertThat(ImageProbe.dimensions(TestImages.webp(800, 600))).containsExactly(800, 600);
        assertThat(ImageProbe.realType(TestImages.gif(7, 9))).isEqualTo(ImageProbe.GIF);
        assertThat(ImageProbe.dimensions(TestImages.gif(7, 9))).containsExactly(7, 9);
        assertThat(ImageProbe.realType("hello".getBytes())).isEqualTo(ImageProbe.UNKNOWN);
        assertThat(ImageProbe.dimensions(new byte[] {(byte) 0x89, 'P', 'N', 'G'}))
                .isNull();
    }

    @Test
    void derivesTheUpstreamTypeFromTheExtensionOnlyLikeNewApi() {
        assertThat(ImageProbe.extensionType("a.JPG")).isEqualTo(ImageProbe.JPEG);
        assertThat(ImageProbe.extensionType("a.jpeg")).isEqualTo(ImageProbe.JPEG);
        assertThat(ImageProbe.extensionType("a.webp")).isEqualTo(ImageProbe.WEBP);
        assertThat(ImageProbe.extensionType("a.gif")).isEqualTo(ImageProbe.PNG);
        assertThat(ImageProbe.extensionType("blob")).isEqualTo(ImageProbe.PNG);
    }
}
