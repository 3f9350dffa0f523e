package io.imageworker.reference;

import io.imageworker.image.ImageInfo;

/**
 * An edit input read from its source, with its real format and size read from its bytes.
 *
 * @param bytes the image
 * @param info what the bytes really are
 */
public record LoadedImage(byte[] bytes, ImageInfo info) {}
