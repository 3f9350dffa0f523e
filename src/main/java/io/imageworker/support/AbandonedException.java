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

    private AbandonedException(String message) {
        super(message, null, false, false);
    }

    /**
     * The request {@code requestId} was given up here because {@code why} (its partition went to another worker):
     * not an outcome, its record is left unacknowledged for the next worker.
     */
    public static AbandonedException givenUp(String requestId, String why) {
        return new AbandonedException(
                "[" + requestId + "] given up here: " + why + "; it is left unacknowledged and will be redelivered");
    }

    private static String firstLine(Throwable cause) {
        String text = cause.toString();
        int end = text.indexOf('\n');
        return end < 0 ? text : text.substring(0, end);
    }
}
