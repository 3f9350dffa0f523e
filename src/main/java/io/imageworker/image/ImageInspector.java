package io.imageworker.image;

import com.drew.imaging.FileType;
import com.drew.imaging.FileTypeDetector;
import com.drew.imaging.ImageProcessingException;
import com.drew.imaging.jpeg.JpegMetadataReader;
import com.drew.imaging.png.PngChunk;
import com.drew.imaging.png.PngChunkReader;
import com.drew.imaging.png.PngChunkType;
import com.drew.imaging.png.PngHeader;
import com.drew.imaging.riff.RiffReader;
import com.drew.lang.ByteArrayReader;
import com.drew.lang.SequentialByteArrayReader;
import com.drew.metadata.Directory;
import com.drew.metadata.Metadata;
import com.drew.metadata.exif.ExifIFD0Directory;
import com.drew.metadata.exif.ExifReader;
import com.drew.metadata.jpeg.JpegDirectory;
import com.drew.metadata.jpeg.JpegReader;
import com.drew.metadata.png.PngDirectory;
import com.drew.metadata.webp.WebpDirectory;
import com.drew.metadata.webp.WebpRiffHandler;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Reads an image's real format, stored size and EXIF orientation from its bytes, with the metadata-extractor library:
 * {@link FileTypeDetector} for the format, then that format's own reader. It never decodes pixels, and never throws
 * for bad input: GIF, BMP, random, empty or truncated bytes come back as an {@link ImageInfo} that is not
 * {@linkplain ImageInfo#isUsable() usable}.
 *
 * <p>Why not {@code ImageMetadataReader.readMetadata}, which runs every reader of the format: its PNG reader inflates
 * {@code zTXt}, {@code iTXt} and {@code iCCP} chunks without a bound, so a 25 MB PNG can expand to gigabytes and bring
 * the worker down; and over a stream the library allocates a chunk's declared length (up to 2 GB) before it reads it.
 * A crash on a message is redelivered and crashes again. So each format's reader is given only the parts needed here
 * (size and orientation) and, for PNG and WebP, a byte-array reader that checks a length against the data before
 * allocating. JPEG segments are at most 64 KiB by construction, so its stream reader is safe. Nothing is parsed by
 * hand: every header and EXIF structure is read by the library.
 *
 * <p>Only headers are read: a JPEG or WebP cut after its header still reports its size (the gateway refuses it later);
 * a PNG is walked chunk by chunk to its end, so a cut PNG reports none.
 */
public final class ImageInspector {

    private static final int ORIENTATION_NORMAL = 1;

    private ImageInspector() {}

    /**
     * Inspects image bytes. Only the bytes count: a file name or declared content type plays no part.
     *
     * @param bytes the whole file; {@code null} or empty is "not an image"
     * @return what the bytes are; never {@code null}
     */
    public static ImageInfo inspect(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return unsupported(FileType.Unknown);
        }
        FileType type;
        try {
            // A ByteArrayInputStream supports the mark/reset the detector needs.
            type = FileTypeDetector.detectFileType(new ByteArrayInputStream(bytes));
        } catch (IOException | RuntimeException e) {
            return unsupported(FileType.Unknown);
        }
        ImageFormat format =
                switch (type) {
                    case Png -> ImageFormat.PNG;
                    case Jpeg -> ImageFormat.JPEG;
                    case WebP -> ImageFormat.WEBP;
                    default -> ImageFormat.UNSUPPORTED;
                };
        if (!format.isSupported()) {
            return unsupported(type);
        }
        Metadata metadata;
        try {
            metadata = read(format, bytes);
        } catch (ImageProcessingException | IOException | RuntimeException e) {
            // Damaged or truncated before the size could be read: the format is known, the size is not.
            return new ImageInfo(format, Optional.empty(), ORIENTATION_NORMAL, type.getName());
        }
        return new ImageInfo(format, sizeOf(format, metadata), orientationOf(metadata), type.getName());
    }

    /**
     * The SHA-256 digest of {@code bytes}, as 64 lower-case hex digits (the {@code sha256} of {@code image-completed}).
     *
     * @param bytes the data to digest
     * @return the hex digest
     */
    public static String sha256Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            // Every Java platform must provide SHA-256 (MessageDigest Javadoc): this cannot happen.
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }

    private static Metadata read(ImageFormat format, byte[] bytes) throws ImageProcessingException, IOException {
        Metadata metadata = new Metadata();
        switch (format) {
            case PNG -> {
                // Only IHDR (size) and eXIf (orientation): no chunk the library would inflate.
                Iterable<PngChunk> chunks = new PngChunkReader()
                        .extract(new SequentialByteArrayReader(bytes), Set.of(PngChunkType.IHDR, PngChunkType.eXIf));
                for (PngChunk chunk : chunks) {
                    if (chunk.getType().equals(PngChunkType.IHDR)) {
                        // As the library's own PngMetadataReader records it.
                        PngHeader header = new PngHeader(chunk.getBytes());
                        PngDirectory directory = new PngDirectory(PngChunkType.IHDR);
                        directory.setInt(PngDirectory.TAG_IMAGE_WIDTH, header.getImageWidth());
                        directory.setInt(PngDirectory.TAG_IMAGE_HEIGHT, header.getImageHeight());
                        metadata.addDirectory(directory);
                    } else {
                        new ExifReader().extract(new ByteArrayReader(chunk.getBytes()), metadata);
                    }
                }
            }
            case JPEG ->
                // SOFn (size) and APP1 Exif (orientation) only; JPEG segments are bounded at 64 KiB each.
                JpegMetadataReader.process(
                        metadata, new ByteArrayInputStream(bytes), List.of(new JpegReader(), new ExifReader()));
            case WEBP ->
                // VP8X, VP8L, VP8 (size) and EXIF (orientation); XMP and ICC are not needed.
                new RiffReader()
                        .processRiff(new SequentialByteArrayReader(bytes), new SizeAndExifWebpHandler(metadata));
            default -> throw new IllegalArgumentException("not a supported format: " + format);
        }
        return metadata;
    }

    private static Optional<ImageSize> sizeOf(ImageFormat format, Metadata metadata) {
        return switch (format) {
            case PNG ->
                firstSize(metadata, PngDirectory.class, PngDirectory.TAG_IMAGE_WIDTH, PngDirectory.TAG_IMAGE_HEIGHT);
            case JPEG ->
                firstSize(metadata, JpegDirectory.class, JpegDirectory.TAG_IMAGE_WIDTH, JpegDirectory.TAG_IMAGE_HEIGHT);
            // With a VP8X chunk its canvas comes first, which is the size of the picture as shown.
            case WEBP ->
                firstSize(metadata, WebpDirectory.class, WebpDirectory.TAG_IMAGE_WIDTH, WebpDirectory.TAG_IMAGE_HEIGHT);
            default -> Optional.empty();
        };
    }

    private static <T extends Directory> Optional<ImageSize> firstSize(
            Metadata metadata, Class<T> type, int widthTag, int heightTag) {
        for (T directory : metadata.getDirectoriesOfType(type)) {
            Integer width = directory.getInteger(widthTag);
            Integer height = directory.getInteger(heightTag);
            if (width != null && height != null && width > 0 && height > 0) {
                return Optional.of(new ImageSize(width, height));
            }
        }
        return Optional.empty();
    }

    private static int orientationOf(Metadata metadata) {
        ExifIFD0Directory exif = metadata.getFirstDirectoryOfType(ExifIFD0Directory.class);
        Integer orientation = exif == null ? null : exif.getInteger(ExifIFD0Directory.TAG_ORIENTATION);
        // An out-of-range value is a broken tag, and a broken tag is best ignored: display as stored.
        return orientation != null && orientation >= 1 && orientation <= 8 ? orientation : ORIENTATION_NORMAL;
    }

    private static ImageInfo unsupported(FileType type) {
        return new ImageInfo(ImageFormat.UNSUPPORTED, Optional.empty(), ORIENTATION_NORMAL, type.getName());
    }

    /** The library's WebP handler, minus the chunks not needed here (XMP would even run an XML parser). */
    private static final class SizeAndExifWebpHandler extends WebpRiffHandler {
        SizeAndExifWebpHandler(Metadata metadata) {
            super(metadata);
        }

        @Override
        public boolean shouldAcceptChunk(String fourCC) {
            return !fourCC.equals(WebpDirectory.CHUNK_XMP)
                    && !fourCC.equals(WebpDirectory.CHUNK_ICCP)
                    && super.shouldAcceptChunk(fourCC);
        }
    }
}
