package io.imageworker.image;

/**
 * What {@link SizePolicy} made of a request's {@code size}: the pixel size to send, or a refusal. A refusal is a
 * business outcome ({@code image-failed} with {@code INVALID_REQUEST}, no gateway call), never an exception.
 */
public sealed interface SizeDecision permits SizeDecision.Accepted, SizeDecision.Refused {

    /** How an accepted size was arrived at; useful in logs and to explain a {@code sent} that differs. */
    enum Basis {
        /** A pixel size within the gateway's limits, sent exactly as written. */
        AS_REQUESTED,
        /** A pixel size that broke the limits, normalized at the 3840 cap. */
        NORMALIZED,
        /** An aspect ratio the gateway spec has a prepared value for, e.g. {@code 16:9} to {@code 1536x864}. */
        PREPARED_VALUE,
        /** An aspect ratio without a prepared value, normalized at the 1536 cap. */
        RATIO_NORMALIZED,
        /** The base image's own size, EXIF orientation applied, normalized at the 1536 cap ({@code edit} only). */
        SOURCE_PROPORTIONS,
        /** {@code 1024x1024}: {@code auto} or absent for {@code generate}, or a base image of unknown size. */
        DEFAULT
    }

    /**
     * The size to send.
     *
     * @param requested the producer's {@code size}, trimmed; {@code null} when it was absent or blank
     * @param sent the size to send to the gateway; always satisfies {@link SizeLimits#isValid}
     * @param basis how {@code sent} was arrived at
     */
    record Accepted(String requested, ImageSize sent, Basis basis) implements SizeDecision {}

    /**
     * The {@code size} cannot be understood; nothing is sent.
     *
     * @param message for the producer: names the field, quotes (a bounded part of) the value, says what is accepted
     */
    record Refused(String message) implements SizeDecision {}
}
