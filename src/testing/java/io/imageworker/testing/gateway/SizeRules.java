package io.imageworker.testing.gateway;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The size limits, the silent size behaviours and the normalization of the gateway contract (§5, §6). */
final class SizeRules {

    static final int MAX_EDGE = 3840;
    static final int MIN_PIXELS = 655_360;
    static final int MAX_PIXELS = 8_294_400;
    static final int MAX_RATIO = 3;
    static final Size DEFAULT = new Size(1024, 1024);
    static final Size RATIO_ALIAS_OUTPUT = new Size(2048, 2048);

    private static final Pattern PIXELS = Pattern.compile("(\\d{1,9})x(\\d{1,9})");
    private static final Pattern RATIO = Pattern.compile("(\\d{1,9}):(\\d{1,9})");

    private SizeRules() {}

    /** A pixel size. */
    record Size(int width, int height) {
        String text() {
            return width + "x" + height;
        }

        long pixels() {
            return (long) width * height;
        }
    }

    /** The outcome for one {@code size} value: an output size (maybe silently changed), or a refusal message. */
    record Decision(Size output, SilentChange change, String rejection) {
        static Decision accept(Size size, SilentChange change) {
            return new Decision(size, change, null);
        }

        static Decision reject(String message) {
            return new Decision(null, null, message);
        }

        boolean rejected() {
            return rejection != null;
        }
    }

    /** What the simulated upstream makes of a {@code size} value ({@code null} when absent). */
    static Decision decide(String raw, OversizeMode mode) {
        if (raw == null || raw.isBlank() || raw.equals("auto")) {
            return Decision.accept(DEFAULT, SilentChange.SIZE_DEFAULTED);
        }
        if (RATIO.matcher(raw).matches()) {
            return Decision.accept(RATIO_ALIAS_OUTPUT, SilentChange.RATIO_ALIAS_TO_2048);
        }
        Matcher m = PIXELS.matcher(raw);
        if (!m.matches()) {
            return Decision.reject("Invalid size '" + raw + "'. Expected WIDTHxHEIGHT, for example '1824x1024'.");
        }
        Size size = new Size(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
        Optional<String> broken = brokenRule(size);
        if (broken.isEmpty()) {
            return Decision.accept(size, null);
        }
        if (mode == OversizeMode.REJECT) {
            return Decision.reject("Invalid size '" + raw + "'. " + broken.get());
        }
        return Decision.accept(normalize(size.width(), size.height()), SilentChange.SIZE_CHANGED);
    }

    /** The first hard limit the size breaks, as the reason of a refusal. */
    static Optional<String> brokenRule(Size size) {
        int w = size.width();
        int h = size.height();
        if (w <= 0 || h <= 0 || w % 16 != 0 || h % 16 != 0) {
            return Optional.of("Width and height must both be divisible by 16.");
        }
        if ((long) w > (long) MAX_RATIO * h || (long) h > (long) MAX_RATIO * w) {
            return Optional.of("The aspect ratio must be between 1:3 and 3:1.");
        }
        if (Math.max(w, h) > MAX_EDGE) {
            return Optional.of("The longest edge must be at most " + MAX_EDGE + " pixels.");
        }
        if (size.pixels() < MIN_PIXELS || size.pixels() > MAX_PIXELS) {
            return Optional.of("The total number of pixels must be between " + MIN_PIXELS + " and " + MAX_PIXELS + ".");
        }
        return Optional.empty();
    }

    static boolean valid(Size size) {
        return brokenRule(size).isEmpty();
    }

    /** The normalization (gateway contract §6) with edge cap 3840, then a valid size guaranteed (rounding can break a limit; 1024x1024 at worst). */
    static Size normalize(int width, int height) {
        double w = Math.max(1, width);
        double h = Math.max(1, height);
        if (w > MAX_RATIO * h) {
            w = MAX_RATIO * h;
        } else if (h > MAX_RATIO * w) {
            h = MAX_RATIO * w;
        }
        double edge = Math.max(w, h);
        if (edge > MAX_EDGE) {
            w = w * MAX_EDGE / edge;
            h = h * MAX_EDGE / edge;
        }
        if (w * h > MAX_PIXELS) {
            double f = Math.sqrt(MAX_PIXELS / (w * h));
            w *= f;
            h *= f;
        }
        if (w * h < MIN_PIXELS) {
            double f = Math.sqrt(MIN_PIXELS / (w * h));
            w *= f;
            h *= f;
            edge = Math.max(w, h);
            if (edge > MAX_EDGE) {
                w = w * MAX_EDGE / edge;
                h = h * MAX_EDGE / edge;
            }
        }
        Size[] candidates = {
            new Size(round16(w), round16(h)),
            new Size(ceil16(w), ceil16(h)),
            new Size(floor16(w), floor16(h)),
            new Size(ceil16(w), round16(h)),
            new Size(round16(w), ceil16(h))
        };
        for (Size candidate : candidates) {
            if (valid(candidate)) {
                return candidate;
            }
        }
        return DEFAULT;
    }

    private static int round16(double v) {
        return Math.max(16, (int) Math.round(v / 16) * 16);
    }

    private static int ceil16(double v) {
        return Math.max(16, (int) Math.ceil(v / 16) * 16);
    }

    private static int floor16(double v) {
        return Math.max(16, (int) Math.floor(v / 16) * 16);
    }
}
