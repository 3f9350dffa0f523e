package io.imageworker.testing.gateway;

/** What happens to a {@code size} that breaks the hard limits of spec 8.1. */
public enum OversizeMode {
    /** 400 {@code Invalid size '...'} with a reason, not billed. */
    REJECT,
    /** 200 with an image of another, valid size (spec 8.2 normalization), billed. */
    SILENTLY_CHANGE
}
