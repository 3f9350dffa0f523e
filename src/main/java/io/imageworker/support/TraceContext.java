package io.imageworker.support;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * Continues a W3C {@code traceparent}: the result keeps the request's trace id and flags and gets a span id of its
 * own, so a tracing backend shows the result as part of the request's trace.
 */
public final class TraceContext {

    private static final Pattern TRACEPARENT =
            Pattern.compile("([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})");

    private TraceContext() {}

    /** The {@code traceparent} of a result, or null when the request had none or an invalid one. */
    public static String continueTrace(String traceparent) {
        if (traceparent == null) {
            return null;
        }
        var matcher = TRACEPARENT.matcher(traceparent.trim());
        if (!matcher.matches()
                || matcher.group(2).equals("0".repeat(32))
                || matcher.group(1).equals("ff")) {
            return null;
        }
        byte[] span = new byte[8];
        do {
            ThreadLocalRandom.current().nextBytes(span);
        } while (HexFormat.of().formatHex(span).equals("0".repeat(16)));
        return "00-" + matcher.group(2) + "-" + HexFormat.of().formatHex(span) + "-" + matcher.group(4);
    }
}
