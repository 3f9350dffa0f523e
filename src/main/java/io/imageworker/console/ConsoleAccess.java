package io.imageworker.console;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * Who is admitted to the console: everyone when no token is set ({@code IMAGE_WORKER_CONSOLE_TOKEN} empty), else a
 * request that sends the token as {@code Authorization: Bearer <token>}, or the cookie the page's token form sets. The
 * cookie holds a digest of the token, not the token; the token itself never appears in a URL, a page or a log line.
 * Comparisons take the same time whatever the bytes sent ({@link MessageDigest#isEqual}).
 */
final class ConsoleAccess {

    /** The cookie the token form sets. */
    static final String COOKIE = "image-worker-console";

    /** The digest of the token (null without one). */
    private final byte[] tokenDigest;
    /** The cookie's value: the digest of a label and the token, in hexadecimal (null without a token). */
    private final String cookieValue;

    ConsoleAccess(Optional<String> token) {
        Optional<String> set = token.filter(value -> !value.isBlank());
        this.tokenDigest = set.map(ConsoleAccess::sha256).orElse(null);
        this.cookieValue = set.map(value -> HexFormat.of().formatHex(sha256("image-worker-console-cookie:" + value)))
                .orElse(null);
    }

    /** Whether a token is set. */
    boolean guarded() {
        return tokenDigest != null;
    }

    /** Whether a request with this {@code Authorization} header and this cookie value (either may be null) is admitted. */
    boolean admits(String authorization, String cookie) {
        if (tokenDigest == null) {
            return true;
        }
        if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            if (MessageDigest.isEqual(
                    tokenDigest, sha256(authorization.substring(7).trim()))) {
                return true;
            }
        }
        return cookie != null
                && MessageDigest.isEqual(
                        cookieValue.getBytes(StandardCharsets.US_ASCII), cookie.getBytes(StandardCharsets.US_ASCII));
    }

    /** Whether {@code typed}, from the token form, is the token. */
    boolean isToken(String typed) {
        return tokenDigest != null && typed != null && MessageDigest.isEqual(tokenDigest, sha256(typed.trim()));
    }

    /** The cookie's value for an admitted browser. */
    String cookieValue() {
        return cookieValue;
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
