package io.imageworker.contract;

/** The {@code error.code} values of {@code image-failed}; see the event contract. */
public enum ErrorCode {
    /** The request breaks the contract. */
    INVALID_REQUEST(false),
    /** A reference or mask cannot be fetched, has a refused format or size, or its source is not allowed. */
    INVALID_REFERENCE(false),
    /** The deadline passed before work started. */
    EXPIRED(false),
    /** The gateway answered 401. */
    UNAUTHORIZED(true),
    /** The gateway answered 404 {@code Invalid URL} or HTML: the base address is wrong. */
    GATEWAY_MISCONFIGURED(true),
    /** 429 persisted through every allowed retry. */
    RATE_LIMITED(true),
    /** The gateway refused the request (moderation, parameter error, other 4xx). */
    REJECTED(false),
    /** 5xx or a broken answer persisted through every allowed retry. */
    UPSTREAM_ERROR(true),
    /** The gateway or a download did not answer in time, through every allowed retry. */
    TIMEOUT(true),
    /** The answer held no usable image. */
    INVALID_OUTPUT(true),
    /** The image could not be stored through every allowed retry. */
    STORAGE_ERROR(true),
    /** The spend guard refused another billed call. */
    BUDGET_EXCEEDED(true),
    /**
     * Contract v1.2: a record on the cancel topic named the request before any gateway call of it was made. Not
     * retryable: the producer asked for it.
     */
    CANCELLED(false);

    private final boolean retryable;

    ErrorCode(boolean retryable) {
        this.retryable = retryable;
    }

    /** Whether sending the same work again, under a new {@code requestId}, may succeed. */
    public boolean retryable() {
        return retryable;
    }
}
