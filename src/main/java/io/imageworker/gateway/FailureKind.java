package io.imageworker.gateway;

import io.imageworker.contract.Billing.CallCost;
import io.imageworker.contract.ErrorCode;

/**
 * What went wrong with one gateway call, with what it cost and the error code a request gets when the fault
 * persists. The retry policy decides by kind: every call is billed by the gateway, so a call is repeated only when
 * the first one cannot have been billed, or when its fate is unknown and the configuration allows it.
 */
public enum FailureKind {
    /** The call never reached the gateway (connection refused, DNS): free to repeat. */
    NOT_SENT(CallCost.NOT_SENT, ErrorCode.UPSTREAM_ERROR),
    /**
     * The call went out on a keep-alive connection the gateway had already closed as idle, and no byte of an answer
     * came: the gateway never read it. Free to repeat at once, on a new connection.
     */
    STALE_CONNECTION(CallCost.NOT_SENT, ErrorCode.UPSTREAM_ERROR),
    /** The spend guard allows no more calls in this window ({@code budget.on-exceeded=fail}): nothing was sent. */
    BUDGET_EXCEEDED(CallCost.NOT_SENT, ErrorCode.BUDGET_EXCEEDED),
    /** Contract v1.2: the request was cancelled before any of its calls left: nothing was sent. */
    CANCELLED(CallCost.NOT_SENT, ErrorCode.CANCELLED),
    /** 429: refused before any work, repeat after a back-off. */
    RATE_LIMITED(CallCost.REFUSED, ErrorCode.RATE_LIMITED),
    /** 401: the token is wrong, deleted, exhausted, or the header is malformed. */
    UNAUTHORIZED(CallCost.REFUSED, ErrorCode.UNAUTHORIZED),
    /** 404 {@code Invalid URL}, a redirect, or an HTML page at 2xx/4xx: the base address is wrong. */
    MISCONFIGURED(CallCost.REFUSED, ErrorCode.GATEWAY_MISCONFIGURED),
    /** 403, 413, model not found: refused before the upstream did any work; repeating cannot help. */
    REFUSED(CallCost.REFUSED, ErrorCode.REJECTED),
    /** 400 and other 4xx: moderation or parameter refusal, billed; never repeated. */
    REJECTED(CallCost.BILLED, ErrorCode.REJECTED),
    /** The call timed out after it was sent, or a proxy gave up (HTML 502/504/524): fate unknown. */
    TIMED_OUT(CallCost.UNKNOWN, ErrorCode.TIMEOUT),
    /** 5xx, a reset or a truncated body after sending: fate unknown. */
    UPSTREAM(CallCost.UNKNOWN, ErrorCode.UPSTREAM_ERROR),
    /** 200 without a usable image: billed, never repeated. */
    INVALID_OUTPUT(CallCost.BILLED, ErrorCode.INVALID_OUTPUT);

    private final CallCost cost;
    private final ErrorCode errorCode;

    FailureKind(CallCost cost, ErrorCode errorCode) {
        this.cost = cost;
        this.errorCode = errorCode;
    }

    /** What a call that ended this way cost. */
    public CallCost cost() {
        return cost;
    }

    /** The error code of a request whose last call ended this way. */
    public ErrorCode errorCode() {
        return errorCode;
    }
}
