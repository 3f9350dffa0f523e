package io.imageworker.testing.gateway;

/** Which gateway the simulator plays. */
public enum Flavour {
    /**
     * The gateway as {@code gateway-spec.md} describes it, read literally: every wrong path is 404 {@code Invalid
     * URL}, a wrong model is 400, the batch routes exist behind authentication, moderation refusals are billed.
     */
    SPEC,
    /**
     * Stock open-source new-api as {@code gateway-ground-truth.md} records it: a path outside {@code /v1},
     * {@code /api}, {@code /assets} gets the 200 HTML console page, a trailing slash after a real route gets a
     * redirect, a wrong model is 503 {@code model_not_found}, the batch routes do not exist, header
     * {@code X-New-Api-Version} is sent, and a non-2xx answer refunds the call (moderation refusals are not billed).
     */
    OPEN_SOURCE
}
