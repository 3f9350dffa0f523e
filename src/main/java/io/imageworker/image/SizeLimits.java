package io.imageworker.image;

import java.util.EnumSet;
import java.util.Set;

/**
 * The gateway's four hard limits on an output size (gateway contract §6). A size that breaks any of them is refused by the
 * gateway or, worse, silently replaced by another one and still billed; so nothing is sent that {@link #isValid} has not
 * accepted.
 *
 * <p>These are facts of the gateway, not tunables, hence constants rather than configuration.
 */
public final class SizeLimits {

    /** The longer side may be at most this many times the shorter one, in either orientation. */
    public static final int MAX_RATIO = 3;

    /** The longest edge may be at most this many pixels. */
    public static final int MAX_EDGE = 3840;

    /** Each side must be a multiple of this. */
    public static final int SIDE_MULTIPLE = 16;

    /** The fewest total pixels accepted (inclusive). */
    public static final long MIN_PIXELS = 655_360L;

    /** The most total pixels accepted (inclusive). */
    public static final long MAX_PIXELS = 8_294_400L;

    private SizeLimits() {}

    /** One of the four hard limits. */
    public enum Rule {
        /** Aspect ratio at most 3:1 either way. */
        RATIO("aspect ratio at most 3:1 either way") {
            @Override
            public boolean holdsFor(ImageSize size) {
                // Integer comparison: no rounding error decides a border case such as 3072x1024.
                return (long) size.longestEdge() <= (long) MAX_RATIO * size.shortestEdge();
            }
        },
        /** Longest edge at most 3840. */
        LONGEST_EDGE("longest edge at most 3840") {
            @Override
            public boolean holdsFor(ImageSize size) {
                return size.longestEdge() <= MAX_EDGE;
            }
        },
        /** Width and height each a multiple of 16. */
        MULTIPLE_OF_16("width and height each a multiple of 16") {
            @Override
            public boolean holdsFor(ImageSize size) {
                return size.width() % SIDE_MULTIPLE == 0 && size.height() % SIDE_MULTIPLE == 0;
            }
        },
        /** Total pixels between 655,360 and 8,294,400 inclusive. */
        TOTAL_PIXELS("total pixels between 655360 and 8294400") {
            @Override
            public boolean holdsFor(ImageSize size) {
                return size.pixels() >= MIN_PIXELS && size.pixels() <= MAX_PIXELS;
            }
        };

        private final String description;

        Rule(String description) {
            this.description = description;
        }

        /** Whether {@code size} keeps this rule. */
        public abstract boolean holdsFor(ImageSize size);

        /** The rule in words, for messages and logs, e.g. {@code longest edge at most 3840}. */
        public String description() {
            return description;
        }
    }

    /** Whether {@code size} keeps all four rules, so the gateway takes it as it is. */
    public static boolean isValid(ImageSize size) {
        return brokenRules(size).isEmpty();
    }

    /** The rules {@code size} breaks, in the order of {@link Rule}; empty when it is valid. */
    public static Set<Rule> brokenRules(ImageSize size) {
        Set<Rule> broken = EnumSet.noneOf(Rule.class);
        for (Rule rule : Rule.values()) {
            if (!rule.holdsFor(size)) {
                broken.add(rule);
            }
        }
        return broken;
    }
}
