package io.imageworker.image;

/**
 * A width and a height in pixels, both at least 1. Says nothing about the gateway's limits: {@link SizeLimits} judges
 * a size, {@link SizePolicy} decides which one to send.
 *
 * @param width the width in pixels, at least 1
 * @param height the height in pixels, at least 1
 */
public record ImageSize(int width, int height) {

    /** Refuses a side below 1: no image, request or source, has an empty or negative side. */
    public ImageSize {
        if (width < 1 || height < 1) {
            throw new IllegalArgumentException("width and height must be at least 1, got " + width + "x" + height);
        }
    }

    /** Width times height; a {@code long} because two large sides overflow an {@code int}. */
    public long pixels() {
        return (long) width * height;
    }

    /** The larger of width and height. */
    public int longestEdge() {
        return Math.max(width, height);
    }

    /** The smaller of width and height. */
    public int shortestEdge() {
        return Math.min(width, height);
    }

    /** The same size turned a quarter: width and height exchanged. */
    public ImageSize swapped() {
        return new ImageSize(height, width);
    }

    /** The gateway's pixel string, {@code WIDTHxHEIGHT} with a lower-case {@code x}, e.g. {@code 1536x864}. */
    @Override
    public String toString() {
        return width + "x" + height;
    }
}
