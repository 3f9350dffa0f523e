package io.imageworker.support;

/**
 * The worker is shutting down and gave up on a request that was still running when the shutdown grace ended (see
 * {@link Shutdown}). Not an outcome: nothing is published or recorded for the request, and its record is neither
 * acknowledged nor failed, so the next worker gets it again. Logged once per request at INFO; never an error.
 */
public final class AbandonedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The request {@code requestId} was given up; {@code cause} is what was ending it, if anything. */
    public AbandonedException(String requestId, Throwable cause) {
        super(
                "[" + requestId + "] abandoned at shutdown; it is left unacknowledged and will be redelivered"
                        + (cause == null ? "" : " (" + firstLine(cause) + ")"),
                cause,
                false,
                false);
    }

    private static String firstLine(Throwable cause) {
        String text = cause.toString();
        int end = text.indexOf('\n');
        return end < 0 ? text : text.substring(0, end);
    }
}
