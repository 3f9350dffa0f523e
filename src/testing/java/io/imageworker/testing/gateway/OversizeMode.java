package io.imageworker.testing.gateway;

/** What happens to a {@code size} that breaks the hard limits (gateway contract §6). */
public enum OversizeMode {
    /** 400 {@code Invalid size '...'} with a reason, not billed. */
    REJECT,
    /** 200 with an image of another, valid size (the normalization of gateway contract §6), billed. */
    SILENTLY_CHANGE
}
