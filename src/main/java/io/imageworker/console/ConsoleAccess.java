package io.imageworker.console;

import io.imageworker.api.StatusCallers;
import io.imageworker.config.StatusTokens;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Who is admitted to the console, and as whom ({@link Viewer}). The operator: by the console's token ({@code
 * IMAGE_WORKER_CONSOLE_TOKEN}) sent as {@code Authorization: Bearer <token>}, or the cookie the page's token form sets;
 * the operator sees every producer's requests. With producer access ({@code IMAGE_WORKER_CONSOLE_PRODUCER_ACCESS},
 * producers taken from their topics), a producer: by its status credential, as the status endpoint takes it ({@link
 * StatusCallers}: its bearer token of {@code IMAGE_WORKER_STATUS_TOKENS}, or the header an ingress sets), or the cookie
 * the form sets when that token is typed; a producer sees its own requests only. Nobody is asked for anything when
 * neither is set: everyone is then the operator.
 *
 * <p>A cookie holds a digest of its token, not the token; no token appears in a URL, a page or a log line. Every
 * comparison takes the same time whatever the bytes sent ({@link MessageDigest#isEqual}), and the producers' cookies
 * are all compared, without stopping at the first match.
 */
final class ConsoleAccess {

    /** The cookie the token form sets. */
    static final String COOKIE = "image-worker-console";

    /** The one who sees everything. */
    static final Viewer OPERATOR = new Viewer(null);

    /** The digest of the operator's token (null without one). */
    private final byte[] tokenDigest;
    /** The operator's cookie: the digest of a label and the token, in hexadecimal (null without a token). */
    private final String cookieValue;
    /** The producers' credentials, when producers are admitted (null otherwise). */
    private final StatusCallers producers;
    /** Each producer's cookie and the digest of its token. */
    private final List<ProducerCookie> producerCookies = new ArrayList<>();

    /** Admits the operator by {@code token} only. */
    ConsoleAccess(Optional<String> token) {
        this(token, null, StatusTokens.NONE);
    }

    /**
     * Admits the operator by {@code token}, and, when {@code producers} is given and requires a credential (producers
     * taken from their topics), each producer by that credential or by the cookie of its token of {@code tokens}.
     */
    ConsoleAccess(Optional<String> token, StatusCallers producers, StatusTokens tokens) {
        Optional<String> set = token.filter(value -> !value.isBlank());
        this.tokenDigest = set.map(ConsoleAccess::sha256).orElse(null);
        this.cookieValue = set.map(ConsoleAccess::cookieOf).orElse(null);
        this.producers = producers != null && producers.required() ? producers : null;
        if (this.producers != null) {
            for (Map.Entry<String, String> producer : tokens.tokens().entrySet()) {
                producerCookies.add(new ProducerCookie(
                        producer.getKey(),
                        sha256(producer.getValue()),
                        cookieOf(producer.getValue()).getBytes(StandardCharsets.US_ASCII)));
            }
        }
    }

    /** Whether a credential is asked for: the operator's token is set, or producers are admitted. */
    boolean guarded() {
        return tokenDigest != null || producers != null;
    }

    /** Whether producers are admitted, each to its own requests. */
    boolean producersAdmitted() {
        return producers != null;
    }

    /** The header an ingress names the producer in, when producers are admitted and the operator named one. */
    Optional<String> producerHeader() {
        return producers == null ? Optional.empty() : producers.header();
    }

    /**
     * Who a request with this {@code Authorization} header, this cookie value and this value of {@link
     * #producerHeader()} (each may be null) is; empty when it is not admitted.
     */
    Optional<Viewer> viewer(String authorization, String cookie, String headerValue) {
        if (!guarded()) {
            return Optional.of(OPERATOR);
        }
        String bearer = authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                ? authorization.substring(7).trim()
                : null;
        if (tokenDigest != null) {
            if (bearer != null && MessageDigest.isEqual(tokenDigest, sha256(bearer))) {
                return Optional.of(OPERATOR);
            }
            if (cookie != null
                    && MessageDigest.isEqual(
                            cookieValue.getBytes(StandardCharsets.US_ASCII),
                            cookie.getBytes(StandardCharsets.US_ASCII))) {
                return Optional.of(OPERATOR);
            }
        }
        if (producers == null) {
            return Optional.empty();
        }
        Optional<String> producer = producers.producer(authorization, headerValue);
        if (producer.isPresent()) {
            return producer.map(Viewer::new);
        }
        if (cookie != null) {
            byte[] presented = cookie.getBytes(StandardCharsets.US_ASCII);
            String found = null;
            for (ProducerCookie known : producerCookies) {
                // Every producer's cookie compared, in constant time each: no early exit.
                if (MessageDigest.isEqual(known.cookie(), presented) && found == null) {
                    found = known.producer();
                }
            }
            if (found != null) {
                return Optional.of(new Viewer(found));
            }
        }
        return Optional.empty();
    }

    /**
     * The cookie for whoever typed {@code typed} in the token form: the operator's when it is the console's token,
     * else the producer's whose status token it is (when producers are admitted); empty when it is neither.
     */
    Optional<String> cookieFor(String typed) {
        if (typed == null) {
            return Optional.empty();
        }
        byte[] presented = sha256(typed.trim());
        if (tokenDigest != null && MessageDigest.isEqual(tokenDigest, presented)) {
            return Optional.of(cookieValue);
        }
        String found = null;
        for (ProducerCookie known : producerCookies) {
            if (MessageDigest.isEqual(known.tokenDigest(), presented) && found == null) {
                found = new String(known.cookie(), StandardCharsets.US_ASCII);
            }
        }
        return Optional.ofNullable(found);
    }

    private static String cookieOf(String token) {
        return HexFormat.of().formatHex(sha256("image-worker-console-cookie:" + token));
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private record ProducerCookie(String producer, byte[] tokenDigest, byte[] cookie) {}

    /**
     * Who looks: the operator ({@code producer} null), who sees everything, or a producer, who sees only the entries
     * whose producer the events name as it.
     */
    record Viewer(String producer) {

        boolean operator() {
            return producer == null;
        }

        /** Whether this viewer may see {@code entry}: a producer, only an entry its events name as that producer's. */
        boolean sees(ConsoleEntry entry) {
            return producer == null || producer.equals(entry.producer());
        }

        /** Whether this viewer may see what is of {@code name}, a producer (null: none known). */
        boolean sees(String name) {
            return producer == null || producer.equals(name);
        }
    }
}
