package io.imageworker.testing.gateway;

import java.time.Duration;
import java.util.Objects;

/**
 * A misbehaviour injected into the next image call(s), see {@link SimulatorControl#injectFault(Fault, int)}. A fault
 * is taken from the queue by the next image call that passes the gateway's own checks (route, token, concurrency
 * cap, model), so a call refused with 401, 404 or 429 does not use one up. It is recorded in
 * {@link RecordedCall#fault()} of the call that took it, even when that call then failed for another reason (a
 * result fault such as {@link #badBase64()} only shows on a success).
 *
 * <p>Whether the call is billed follows the kind (see each factory) unless set with {@link #billed(boolean)}.
 *
 * @param kind what goes wrong
 * @param status the HTTP status, where the kind has one
 * @param body the response body of {@link Kind#STATUS}, the URL of {@link Kind#FOREIGN_URL}
 * @param retryAfterSeconds {@code Retry-After} of {@link Kind#RATE_LIMITED}; 0 sends none
 * @param delay how long {@link Kind#PROXY_HTML} waits before answering
 * @param width output width of {@link Kind#WRONG_OUTPUT_SIZE}; 0 lets the simulator pick another size
 * @param height output height of {@link Kind#WRONG_OUTPUT_SIZE}; 0 lets the simulator pick another size
 * @param billed {@code null} for the kind's default, else whether the call is billed
 */
public record Fault(
        Kind kind,
        int status,
        String body,
        int retryAfterSeconds,
        Duration delay,
        int width,
        int height,
        Boolean billed) {

    /** The kinds of fault. */
    public enum Kind {
        /** Answer the given status and JSON body after the latency. */
        STATUS,
        /** 400 moderation refusal, OpenAI {@code moderation_blocked} body as relayed by new-api. */
        MODERATION_REFUSAL,
        /** 429 from upstream, with or without {@code Retry-After}. */
        RATE_LIMITED,
        /** A 5xx: 500 {@code do_request_failed}, or another 5xx {@code bad_response_status_code}. */
        SERVER_ERROR,
        /** Never answer; the call ends when the client gives up (or the simulator is reset or closed). */
        HANG,
        /** 200 with a {@code Content-Length} larger than what is sent, then the connection is closed. */
        TRUNCATED_BODY,
        /** 200 {@code text/html}: the web console's index page. */
        HTML_CONSOLE_PAGE,
        /** A reverse proxy's HTML error page (502, 504, 524...) after a delay. */
        PROXY_HTML,
        /** A success whose image has another size than the one asked for. */
        WRONG_OUTPUT_SIZE,
        /** Edits: only the first reference image is used; later ones are dropped with no signal. */
        DROP_LATER_REFERENCE_IMAGES,
        /** A {@code b64_json} success whose value is not valid base64. */
        BAD_BASE64,
        /** A success whose "image" is plain text bytes (in the configured form). */
        NON_IMAGE_BYTES,
        /** A {@code url} success whose download answers 404 or 403 at once. */
        EXPIRED_URL,
        /** A {@code url} success whose download never answers. */
        HANGING_URL,
        /** A {@code url} success whose URL is {@link Fault#body()}, not one of the simulator's files. */
        FOREIGN_URL
    }

    public Fault {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(delay, "delay");
    }

    private static Fault of(Kind kind, int status) {
        return new Fault(kind, status, null, 0, Duration.ZERO, 0, 0, null);
    }

    /** Any status with this JSON body, after the latency. Billed when the status is 2xx. */
    public static Fault status(int status, String jsonBody) {
        return new Fault(
                Kind.STATUS, status, Objects.requireNonNull(jsonBody, "jsonBody"), 0, Duration.ZERO, 0, 0, null);
    }

    /**
     * 400 {@code moderation_blocked} (gateway contract §7), after the latency. Billed in {@link Flavour#SPEC} (gateway contract
     * §7), refunded in {@link Flavour#OPEN_SOURCE} (gateway contract §7).
     */
    public static Fault moderationRefusal() {
        return of(Kind.MODERATION_REFUSAL, 400);
    }

    /** 429 {@code rate_limit_exceeded} from upstream without {@code Retry-After}. Not billed. */
    public static Fault rateLimited() {
        return of(Kind.RATE_LIMITED, 429);
    }

    /** 429 {@code rate_limit_exceeded} from upstream with {@code Retry-After: seconds}. Not billed. */
    public static Fault rateLimited(int retryAfterSeconds) {
        return new Fault(Kind.RATE_LIMITED, 429, null, retryAfterSeconds, Duration.ZERO, 0, 0, null);
    }

    /**
     * A 5xx after the latency: 500 gives new-api's {@code upstream error: do request failed}, any other status the
     * relayed {@code bad_response_status_code} body. Not billed.
     */
    public static Fault serverError(int status) {
        if (status < 500 || status > 599) {
            throw new IllegalArgumentException("not a 5xx: " + status);
        }
        return of(Kind.SERVER_ERROR, status);
    }

    /** Never answer. Billed: the upstream keeps generating and charges (new-api#4364). */
    public static Fault hang() {
        return of(Kind.HANG, 0);
    }

    /** 200, {@code Content-Length} larger than the bytes sent, then the connection closes. Billed. */
    public static Fault truncatedBody() {
        return of(Kind.TRUNCATED_BODY, 200);
    }

    /** 200 {@code text/html} console page at once. Not billed. */
    public static Fault htmlConsolePage() {
        return of(Kind.HTML_CONSOLE_PAGE, 200);
    }

    /**
     * A proxy's HTML error page after {@code delay}: 502 and 504 as nginx writes them, 524 as Cloudflare does. Billed:
     * the gateway behind the proxy still finishes and charges (new-api#4920).
     */
    public static Fault proxyHtml(int status, Duration delay) {
        return new Fault(Kind.PROXY_HTML, status, null, 0, delay, 0, 0, null);
    }

    /** A success with an image of {@code width}x{@code height} instead of the size asked for. Billed. */
    public static Fault wrongOutputSize(int width, int height) {
        return new Fault(Kind.WRONG_OUTPUT_SIZE, 200, null, 0, Duration.ZERO, width, height, null);
    }

    /** A success with an image of another size than asked (the simulator picks one). Billed. */
    public static Fault wrongOutputSize() {
        return wrongOutputSize(0, 0);
    }

    /** Edits: only the first reference image is used, the call succeeds. Billed. */
    public static Fault dropLaterReferenceImages() {
        return of(Kind.DROP_LATER_REFERENCE_IMAGES, 200);
    }

    /** A {@code b64_json} success (whatever the configured form) with invalid base64. Billed. */
    public static Fault badBase64() {
        return of(Kind.BAD_BASE64, 200);
    }

    /** A success in the configured form whose bytes are text, not an image. Billed. */
    public static Fault nonImageBytes() {
        return of(Kind.NON_IMAGE_BYTES, 200);
    }

    /** A {@code url} success (whatever the configured form) whose download answers 404 at once. Billed. */
    public static Fault expiredUrl() {
        return expiredUrl(404);
    }

    /** A {@code url} success whose download answers {@code status} (404 or 403) at once. Billed. */
    public static Fault expiredUrl(int status) {
        return of(Kind.EXPIRED_URL, status);
    }

    /** A {@code url} success whose download never answers. Billed. */
    public static Fault hangingUrl() {
        return of(Kind.HANGING_URL, 200);
    }

    /**
     * A {@code url} success (whatever the configured form) whose URL is {@code url}: a misbehaving gateway that points
     * its client at the cloud metadata endpoint, the client's own machine or a private address. Billed.
     */
    public static Fault foreignUrl(String url) {
        return new Fault(Kind.FOREIGN_URL, 200, Objects.requireNonNull(url, "url"), 0, Duration.ZERO, 0, 0, null);
    }

    /** The same fault, billed or not regardless of its kind's default. */
    public Fault billed(boolean value) {
        return new Fault(kind, status, body, retryAfterSeconds, delay, width, height, value);
    }

    /** Whether a call that took this fault is billed under {@code flavour}. */
    boolean billedUnder(Flavour flavour) {
        if (billed != null) {
            return billed;
        }
        return switch (kind) {
            case STATUS -> status >= 200 && status < 300;
            case MODERATION_REFUSAL -> flavour == Flavour.SPEC;
            case RATE_LIMITED, SERVER_ERROR, HTML_CONSOLE_PAGE -> false;
            default -> true;
        };
    }

    /** Whether this fault only changes what a success looks like (as opposed to replacing the answer). */
    boolean altersSuccess() {
        return switch (kind) {
            case TRUNCATED_BODY,
                    WRONG_OUTPUT_SIZE,
                    DROP_LATER_REFERENCE_IMAGES,
                    BAD_BASE64,
                    NON_IMAGE_BYTES,
                    EXPIRED_URL,
                    HANGING_URL,
                    FOREIGN_URL -> true;
            default -> false;
        };
    }
}
