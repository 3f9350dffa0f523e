package io.imageworker.gateway;

import io.imageworker.image.ImageInfo;
import io.imageworker.image.ImageSize;

/**
 * An image the gateway gave, read and checked: its bytes, what they really are, and their SHA-256.
 *
 * @param bytes the file
 * @param info its real format and stored size
 * @param sha256 64 lower-case hex digits
 */
public record ReceivedImage(byte[] bytes, ImageInfo info, String sha256) {

    /** Its stored size; only images with one are received. */
    public ImageSize size() {
        return info.size().orElseThrow();
    }
}
