package io.imageworker.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * {@code IMAGE_WORKER_REFERENCE_PREFIXES} read (issue 49): the places an {@code s3://} reference may be read from,
 * each {@code s3://<bucket>/<key prefix>}, the key prefix empty (the whole bucket) or ending with {@code /}, so that
 * {@code s3://images/shared/} covers {@code shared/logo.png} but not {@code shared-old/logo.png}.
 *
 * @param prefixes the prefixes in the setting's order
 */
public record ReferencePrefixes(List<Prefix> prefixes) {

    /** The setting's name, in messages. */
    public static final String SETTING = "IMAGE_WORKER_REFERENCE_PREFIXES";

    /** A bucket's name, as {@code storage.ObjectAddress} reads one. */
    private static final Pattern BUCKET = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,254}");

    /** A key prefix: segments of {@code [A-Za-z0-9._-]}, none {@code .} or {@code ..}, each followed by {@code /}. */
    private static final Pattern KEY_PREFIX = Pattern.compile("([A-Za-z0-9._-]+/)*");

    /**
     * One place references may be read from.
     *
     * @param bucket the bucket
     * @param keyPrefix the keys' prefix: empty, or ending with {@code /}
     */
    public record Prefix(String bucket, String keyPrefix) {

        /** Whether the object {@code key} of {@code bucket} is under this prefix. */
        public boolean covers(String bucket, String key) {
            return this.bucket.equals(bucket) && key.startsWith(keyPrefix);
        }

        /**
         * Whether this prefix and the keys under {@code otherPrefix} of {@code bucket} share any key: one prefix
         * begins the other.
         */
        public boolean overlaps(String bucket, String otherPrefix) {
            return this.bucket.equals(bucket)
                    && (keyPrefix.startsWith(otherPrefix) || otherPrefix.startsWith(keyPrefix));
        }

        @Override
        public String toString() {
            return "s3://" + bucket + "/" + keyPrefix;
        }
    }

    /**
     * The prefixes {@code setting} names, or empty when it names none (unset, or only blanks).
     *
     * @throws IllegalArgumentException naming the setting and the entry it refuses
     */
    public static Optional<ReferencePrefixes> of(Optional<List<String>> setting) {
        List<Prefix> prefixes = new ArrayList<>();
        for (String entry : setting.orElse(List.of())) {
            String text = entry.trim();
            if (text.isEmpty()) {
                continue;
            }
            prefixes.add(parse(text));
        }
        return prefixes.isEmpty() ? Optional.empty() : Optional.of(new ReferencePrefixes(List.copyOf(prefixes)));
    }

    private static Prefix parse(String text) {
        if (!text.startsWith("s3://")) {
            throw invalid(text, "is not s3://<bucket>/<key prefix>");
        }
        String rest = text.substring("s3://".length());
        int slash = rest.indexOf('/');
        String bucket = slash < 0 ? rest : rest.substring(0, slash);
        String keyPrefix = slash < 0 ? "" : rest.substring(slash + 1);
        if (!BUCKET.matcher(bucket).matches()) {
            throw invalid(text, "does not name a bucket");
        }
        if (!KEY_PREFIX.matcher(keyPrefix).matches()
                || keyPrefix.startsWith("./")
                || keyPrefix.startsWith("../")
                || keyPrefix.contains("/./")
                || keyPrefix.contains("/../")) {
            throw invalid(
                    text,
                    "must end with '/' (or name the whole bucket, s3://<bucket>/), its segments of [A-Za-z0-9._-]"
                            + " and none '.' or '..'");
        }
        return new Prefix(bucket, keyPrefix);
    }

    private static IllegalArgumentException invalid(String entry, String why) {
        return new IllegalArgumentException(SETTING + ": '" + entry + "' " + why);
    }

    /** Whether the object {@code key} of {@code bucket} is under one of the prefixes. */
    public boolean covers(String bucket, String key) {
        for (Prefix prefix : prefixes) {
            if (prefix.covers(bucket, key)) {
                return true;
            }
        }
        return false;
    }
}
