package io.imageworker.reference;

import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.RequestFailure;

/**
 * A reference or mask that cannot be used: not fetchable, not png/jpeg/webp, over 25 MB, or from a source that is not
 * allowed. Ends the request with {@code INVALID_REFERENCE}, before any gateway call. The message names the reference
 * ({@code references[1]}, {@code mask}).
 */
public final class ReferenceRefusedException extends RequestFailure {

    private static final long serialVersionUID = 1L;

    /** A refusal whose message names the reference and the reason. */
    public ReferenceRefusedException(String message) {
        super(ErrorCode.INVALID_REFERENCE, message);
    }
}
