package io.imageworker.testing.gateway;

/** Something the simulator did differently from what the request asked, without saying so in the answer. */
public enum SilentChange {
    /** {@code size} omitted (or {@code auto}): the output is 1024x1024, whatever the source image's size. */
    SIZE_DEFAULTED,
    /** {@code size} was a ratio alias such as {@code 16:9}: the output is 2048x2048. */
    RATIO_ALIAS_TO_2048,
    /** {@code size} broke a hard limit and was changed to another valid size ({@link OversizeMode#SILENTLY_CHANGE}). */
    SIZE_CHANGED,
    /** {@code n} was sent: one image was produced anyway (and the call billed {@code n} times). */
    N_IGNORED,
    /** {@code moderation} was sent and ignored. */
    MODERATION_IGNORED,
    /** Edits: {@code image} file parts were present, so every {@code image[]} part was dropped. */
    IMAGE_ARRAY_DROPPED,
    /** Edits: only the first reference image was used, later ones were dropped (injected fault). */
    LATER_IMAGES_DROPPED,
    /** Edits: images sent as {@code image[0]}, {@code image[1]}... were used in another order. */
    REFERENCE_ORDER_SHUFFLED,
    /** Edits: more than one {@code mask} part; only the first was used. */
    EXTRA_MASKS_DROPPED,
    /** The output has another size than the one asked for (injected fault). */
    OUTPUT_SIZE_WRONG
}
