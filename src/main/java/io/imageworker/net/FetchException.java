package io.imageworker.net;

/**
 * Why a {@link GuardedFetcher} download gave no body. The message names the host, never the path or query, which may
 * hold a signature; each caller puts it into its own failure (a refused reference, a failed gateway answer).
 */
public final class FetchException extends RuntimeException {

    /** What kind of failure, for a caller that retries some and not others. */
    public enum Kind {
        /** The URL, an address of its host, the address reached or a redirect broke a rule: nothing was fetched. */
        REFUSED,
        /** The last hop answered a status other than 200 ({@link #status()}). */
        STATUS,
        /** The body is larger than the cap, announced or while reading. */
        TOO_LARGE,
        /** The whole download, redirects and name lookups included, did not finish within the timeout. */
        TIMED_OUT,
        /** The name could not be resolved, no connection could be made, or the answer broke off. */
        FAILED,
        /** The caller gave up on the download. */
        CANCELLED
    }

    private final Kind kind;
    private final int status;

    FetchException(Kind kind, String message) {
        this(kind, 0, message);
    }

    FetchException(Kind kind, int status, String message) {
        super(message, null, false, false);
        this.kind = kind;
        this.status = status;
    }

    /** A refusal by the caller's URL rules ({@link GuardedFetcher.Rules#target}). */
    public static FetchException refused(String message) {
        return new FetchException(Kind.REFUSED, message);
    }

    public Kind kind() {
        return kind;
    }

    /** The HTTP status of a {@link Kind#STATUS} failure; 0 otherwise. */
    public int status() {
        return status;
    }

    /** The same failure, its message after {@code prefix}. */
    FetchException prefixed(String prefix) {
        return new FetchException(kind, status, prefix + getMessage());
    }
}
