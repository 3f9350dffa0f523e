package io.imageworker.contract;

/**
 * A stage's reason to end a request without an image: the request, a reference, the answer or the store is at fault,
 * and the error code says which. The orchestrator turns it into the request's {@code image-failed}; it is never a
 * defect (an unexpected exception is reported as one). A stage logs the cause where it knows it; codes that need an
 * operator ({@code STORAGE_ERROR}) are logged as errors, a producer's mistake at INFO.
 */
public class RequestFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient ErrorCode code;

    /** A failure with this code and a message for the event. */
    public RequestFailure(ErrorCode code, String message) {
        this(code, message, null);
    }

    /** A failure with this code, a message for the event, and the exception behind it. */
    public RequestFailure(ErrorCode code, String message, Throwable cause) {
        super(message, cause, false, false);
        this.code = code;
    }

    /** The {@code error.code} of the request's {@code image-failed}. */
    public ErrorCode code() {
        return code;
    }
}
