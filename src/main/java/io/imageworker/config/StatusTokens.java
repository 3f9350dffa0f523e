package io.imageworker.config;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * {@code IMAGE_WORKER_STATUS_TOKENS} read (issue 49): the bearer token of each producer's status queries, {@code
 * name=token,...}, with {@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}. A token is at least {@value #LEAST_LENGTH}
 * characters of visible ASCII but {@code ,} (32 random bytes in base64 or hex will do), and no two producers share one.
 *
 * @param tokens each producer's token, by name
 */
public record StatusTokens(Map<String, String> tokens) {

    /** The setting's name, in messages. */
    public static final String SETTING = "IMAGE_WORKER_STATUS_TOKENS";

    /** The fewest characters of a token: guessing one must be hopeless. */
    public static final int LEAST_LENGTH = 32;

    private static final Pattern TOKEN = Pattern.compile("[\\x21-\\x2b\\x2d-\\x7e]{" + LEAST_LENGTH + ",}");

    /** No tokens. */
    public static final StatusTokens NONE = new StatusTokens(Map.of());

    /**
     * The tokens {@code setting} names, or {@link #NONE} when it is unset or blank.
     *
     * @throws IllegalArgumentException naming the setting and the producer whose entry it refuses, never a token
     */
    public static StatusTokens of(Optional<String> setting) {
        if (setting.isEmpty() || setting.get().isBlank()) {
            return NONE;
        }
        // Not ProducerList.parse: its messages quote the entry, and an entry holds a token.
        Set<String> seen = new HashSet<>();
        Map<String, String> tokens = new LinkedHashMap<>();
        String[] entries = setting.get().split(",", -1);
        for (int i = 0; i < entries.length; i++) {
            String entry = entries[i].trim();
            int equals = entry.indexOf('=');
            String name = equals < 0 ? "" : entry.substring(0, equals).trim();
            if (!ProducerList.NAME.matcher(name).matches()) {
                throw new IllegalArgumentException(SETTING + ": entry " + (i + 1) + " is not name=token with a"
                        + " producer's name (1 to 64 characters of [A-Za-z0-9._-])");
            }
            String token = entry.substring(equals + 1).trim();
            if (!TOKEN.matcher(token).matches()) {
                throw new IllegalArgumentException(SETTING + ": the token of " + name + " must be at least "
                        + LEAST_LENGTH + " characters of visible ASCII, without ','");
            }
            if (!seen.add(token)) {
                throw new IllegalArgumentException(SETTING + ": the token of " + name + " is another producer's too");
            }
            if (tokens.put(name, token) != null) {
                throw new IllegalArgumentException(SETTING + ": " + name + " is named twice");
            }
        }
        return new StatusTokens(Map.copyOf(tokens));
    }
}
