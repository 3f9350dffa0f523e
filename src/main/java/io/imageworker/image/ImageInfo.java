package io.imageworker.image;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link ImageInspector} read from an image's bytes.
 *
 * @param format the real format, from the magic bytes; {@link ImageFormat#UNSUPPORTED} for anything else
 * @param size the stored width and height; empty when they cannot be read (damaged, truncated, or not a supported
 *     image)
 * @param exifOrientation the EXIF orientation, 1 to 8; 1 when absent or invalid
 * @param detectedType the name of what the bytes look like, for messages: {@code PNG}, {@code JPEG}, {@code WebP},
 *     {@code GIF}, {@code BMP}, ..., or {@code Unknown}
 */
public record ImageInfo(ImageFormat format, Optional<ImageSize> size, int exifOrientation, String detectedType) {

    /** Refuses missing parts and an orientation outside 1 to 8, which the inspector never reports. */
    public ImageInfo {
        Objects.requireNonNull(format, "format");
        Objects.requireNonNull(size, "size");
        Objects.requireNonNull(detectedType, "detectedType");
        if (exifOrientation < 1 || exifOrientation > 8) {
            throw new IllegalArgumentException("EXIF orientation must be 1 to 8, got " + exifOrientation);
        }
    }

    /** Whether the bytes are a png, jpeg or webp whose size could be read: the only images worth sending. */
    public boolean isUsable() {
        return refusal().isEmpty();
    }

    /**
     * Why these bytes must not be sent, in words for a producer (without the field name, which the caller knows).
     *
     * @return empty when {@link #isUsable()}; otherwise e.g. {@code is a GIF image; only png, jpeg and webp are
     *     accepted}
     */
    public Optional<String> refusal() {
        if (!format.isSupported()) {
            return Optional.of(
                    "Unknown".equals(detectedType)
                            ? "is not an image; only png, jpeg and webp are accepted"
                            : "is a " + detectedType + " file; only png, jpeg and webp are accepted");
        }
        if (size.isEmpty()) {
            return Optional.of("looks like " + format.name().toLowerCase(Locale.ROOT)
                    + " but its dimensions cannot be read (damaged or truncated)");
        }
        return Optional.empty();
    }

    /** The size as displayed: {@link #size()} with width and height swapped when the EXIF orientation is 5 to 8. */
    public Optional<ImageSize> displaySize() {
        return size.map(s -> exifOrientation >= 5 ? s.swapped() : s);
    }
}
