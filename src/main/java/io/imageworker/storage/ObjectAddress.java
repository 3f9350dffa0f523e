package io.imageworker.storage;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An object in the store, as an {@code s3://bucket/key} reference names it, checked before it can reach the store.
 *
 * <p>A key is passed to the store as it is written: the worker decodes nothing and resolves nothing. What a store, a
 * proxy or an HTTP library in between might decode or resolve differently is refused instead, so that the object
 * read is always the one the address names and never one outside the bucket the allow-list checked: {@code .} and
 * {@code ..} segments, empty segments (a leading, doubled or trailing {@code /}), a backslash, a {@code %} (a
 * percent-escape such as {@code %2e%2e} is {@code ..} to whoever decodes it), control characters and text that is not
 * valid Unicode. A key is at most 1,024 bytes of UTF-8, the S3 limit.
 */
public record ObjectAddress(String bucket, String key) {

    /** The scheme of an address in the store. */
    public static final String SCHEME = "s3://";

    /** The S3 limit of a key, in bytes of UTF-8. */
    static final int MAX_KEY_BYTES = 1024;

    private static final Pattern BUCKET = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,254}");

    /**
     * The bucket and key of an {@code s3://bucket/key} address.
     *
     * @throws IllegalArgumentException naming what is wrong with it, when the address breaks the rules above
     */
    public static ObjectAddress parse(String uri) {
        if (uri == null || !uri.startsWith(SCHEME)) {
            throw new IllegalArgumentException("is not an " + SCHEME + " address");
        }
        String rest = uri.substring(SCHEME.length());
        int slash = rest.indexOf('/');
        if (slash <= 0 || slash == rest.length() - 1) {
            throw new IllegalArgumentException("is not s3://bucket/key");
        }
        String bucket = rest.substring(0, slash);
        if (!BUCKET.matcher(bucket).matches()) {
            throw new IllegalArgumentException("names no valid bucket");
        }
        String key = rest.substring(slash + 1);
        keyRefusal(key).ifPresent(reason -> {
            throw new IllegalArgumentException(reason);
        });
        return new ObjectAddress(bucket, key);
    }

    /**
     * Why {@code key} must not be sent to the store, or empty when it may: the rules of the class comment. Keys the
     * worker builds itself are checked with it too.
     */
    public static Optional<String> keyRefusal(String key) {
        if (key == null || key.isEmpty()) {
            return Optional.of("has an empty key");
        }
        if (!StandardCharsets.UTF_8.newEncoder().canEncode(key)) {
            return Optional.of("has a key that is not valid Unicode");
        }
        if (key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
            return Optional.of("has a key longer than " + MAX_KEY_BYTES + " bytes");
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c == 0x7f || Character.getType(c) == Character.CONTROL) {
                return Optional.of("has a control character in its key");
            }
            if (c == '\\' || c == '%') {
                return Optional.of("has a '" + c + "' in its key (no escapes: the key is used as written)");
            }
        }
        for (String segment : key.split("/", -1)) {
            if (segment.isEmpty()) {
                return Optional.of("has an empty segment in its key (a leading, doubled or trailing '/')");
            }
            if (segment.equals(".") || segment.equals("..")) {
                return Optional.of("has a '" + segment + "' segment in its key");
            }
        }
        return Optional.empty();
    }

    /** {@code s3://bucket/key}. */
    @Override
    public String toString() {
        return SCHEME + bucket + "/" + key;
    }
}
