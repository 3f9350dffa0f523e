package io.imageworker.testing.gateway;

/** Which gateway the simulator plays. */
public enum Flavour {
    /**
     * The gateway as its specification describes it (docs/gateway-contract.md), read literally: every wrong path is 404 {@code Invalid
     * URL}, a wrong model is 400, the batch routes exist behind authentication, moderation refusals are billed.
     */
    SPEC,
    /**
     * The open-source gateway as it really answers (docs/gateway-contract.md): a path outside {@code /v1},
     * {@code /api}, {@code /assets} gets the 200 HTML console page, a trailing slash after a real route gets a
     * redirect, a wrong model is 503 {@code model_not_found}, the batch routes do not exist, header
     * {@code X-New-Api-Version} is sent, and a non-2xx answer refunds the call (moderation refusals are not billed).
     */
    OPEN_SOURCE
}
