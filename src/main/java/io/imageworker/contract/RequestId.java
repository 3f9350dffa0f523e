package io.imageworker.contract;

import java.util.regex.Pattern;

/**
 * The event contract's rule for a {@code requestId}: 1 to 128 characters of {@code [A-Za-z0-9._:-]}. The id becomes
 * part of storage keys ({@code <keyPrefix><requestId>.<ext>}, {@code <resultPrefix><requestId>.json}), so a record
 * whose id breaks the rule is not a request at all: it never reaches the store (it goes to the DLQ), and the store
 * refuses to build a key from it anyway.
 */
public final class RequestId {

    /** The rule, as refusals and DLQ reasons state it. */
    public static final String RULE = "1 to 128 characters of [A-Za-z0-9._:-]";

    /** The longest id the contract allows. */
    public static final int MAX_LENGTH = 128;

    private static final Pattern PATTERN = Pattern.compile("[A-Za-z0-9._:-]{1," + MAX_LENGTH + "}");

    private RequestId() {}

    /** Whether {@code id} follows the contract's rule. */
    public static boolean isValid(String id) {
        // The length first: the pattern is never run over a megabyte of text.
        return id != null && id.length() <= MAX_LENGTH && PATTERN.matcher(id).matches();
    }
}
