package io.imageworker.reference;

import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.RequestFailure;

/**
 * The store holding an {@code s3://} reference could not be read (unreachable, timing out, answering 5xx) through the
 * worker's infrastructure patience. Unlike {@link ReferenceRefusedException}, nothing is wrong with the request: it
 * ends with {@code STORAGE_ERROR} (retryable), before any gateway call, and is logged as an error because it needs an
 * operator, not a producer. The message names the reference and the store's failure.
 */
public final class ReferenceStoreException extends RequestFailure {

    private static final long serialVersionUID = 1L;

    /** A store failure while reading the reference named at the start of {@code message}. */
    public ReferenceStoreException(String message, Throwable cause) {
        super(ErrorCode.STORAGE_ERROR, message, cause);
    }
}
