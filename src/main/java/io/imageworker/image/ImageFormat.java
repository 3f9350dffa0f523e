package io.imageworker.image;

import java.util.Locale;
import java.util.Optional;

/**
 * An image format as read from the bytes. The gateway takes png, jpeg and webp (gateway contract §4) and guesses the
 * format from a file part's extension (4.3), so the MIME type and extension sent always come from here, never from a
 * producer's declared type or file name.
 */
public enum ImageFormat {
    /** Portable Network Graphics. */
    PNG("image/png", ".png"),
    /** JPEG (JFIF or Exif). */
    JPEG("image/jpeg", ".jpg"),
    /** WebP, lossy or lossless. */
    WEBP("image/webp", ".webp"),
    /** Anything else: another image format (GIF, BMP, TIFF, ...) or no image at all. Never sent to the gateway. */
    UNSUPPORTED("application/octet-stream", ".bin");

    private final String mimeType;
    private final String extension;

    ImageFormat(String mimeType, String extension) {
        this.mimeType = mimeType;
        this.extension = extension;
    }

    /** The MIME type, e.g. {@code image/jpeg}; {@code application/octet-stream} for {@link #UNSUPPORTED}. */
    public String mimeType() {
        return mimeType;
    }

    /** The file extension with its dot, e.g. {@code .jpg}; {@code .bin} for {@link #UNSUPPORTED}. */
    public String extension() {
        return extension;
    }

    /** Whether the gateway accepts this format: true for everything but {@link #UNSUPPORTED}. */
    public boolean isSupported() {
        return this != UNSUPPORTED;
    }

    /**
     * The supported format a declared content type names, to compare with what the bytes say. Case and parameters are
     * ignored ({@code Image/PNG; q=1} is PNG) and the common misspelling {@code image/jpg} is JPEG.
     *
     * @param contentType a declared content type; may be {@code null}
     * @return the format, or empty when the type is absent or names no supported format
     */
    public static Optional<ImageFormat> fromMimeType(String contentType) {
        if (contentType == null) {
            return Optional.empty();
        }
        String type = contentType.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
        return switch (type) {
            case "image/png" -> Optional.of(PNG);
            case "image/jpeg", "image/jpg" -> Optional.of(JPEG);
            case "image/webp" -> Optional.of(WEBP);
            default -> Optional.empty();
        };
    }
}
