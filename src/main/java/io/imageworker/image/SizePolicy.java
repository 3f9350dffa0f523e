package io.imageworker.image;

import io.imageworker.image.SizeDecision.Accepted;
import io.imageworker.image.SizeDecision.Basis;
import io.imageworker.image.SizeDecision.Refused;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns a request's {@code size} into the explicit, valid {@code WIDTHxHEIGHT} the worker sends, because the gateway
 * silently draws a wrong picture (and bills it) for a ratio alias, a missing size or one outside its limits (gateway
 * gateway contract §5 and §6; event contract, "Sizes").
 *
 * <h2>Accepted forms</h2>
 *
 * <ul>
 *   <li>{@code WIDTHxHEIGHT}: whole pixel numbers. Valid sizes are sent as they are; others are normalized at the 3840
 *       cap.
 *   <li>{@code W:H}: an aspect ratio, reduced first ({@code 32:18} is {@code 16:9}); the gateway's prepared value
 *       where it has one, else the largest size of that ratio with a longest edge of 1536, normalized at the 1536 cap
 *       (this reproduces every prepared value but {@code 1:1}, which the gateway pins to {@code 1024x1024}). A ratio beyond
 *       3:1 is clamped to 3:1. {@code W:H} itself is never sent.
 *   <li>{@code auto}, absent or blank: {@code 1024x1024} for {@code generate}; for {@code edit} the base image's own
 *       size, normalized at the 1536 cap.
 * </ul>
 *
 * <p>Strict but friendly: surrounding whitespace is ignored, {@code X} is taken for {@code x} and {@code AUTO} for
 * {@code auto}, since each has only one possible meaning. Everything else is refused: inner spaces, signs, decimals,
 * units, non-ASCII digits, a zero, and any number above {@value #MAX_NUMBER} (which also keeps every later product
 * inside a {@code long} and exact in a {@code double}).
 *
 * <h2>Normalization (gateway contract §6) and its repair</h2>
 *
 * <ol>
 *   <li>clamp the ratio to 3:1 by reducing the longer side;
 *   <li>scale down so the longest edge is at most the cap;
 *   <li>scale down if the pixels exceed {@link SizeLimits#MAX_PIXELS};
 *   <li>scale up if the pixels are below {@link SizeLimits#MIN_PIXELS}, then re-cap the longest edge (the cap wins);
 *   <li>round each side to the nearest multiple of 16 (halves up), at least 16.
 * </ol>
 *
 * Rounding can break a limit the exact size kept: {@code 1011x3500} clamps to {@code 1011x3033} and rounds to {@code
 * 1008x3040}, more than 3:1; a size scaled to exactly the pixel bound can round to just below or above it. So the
 * rounded size is checked and repaired, one 16-pixel step at a time, until it is valid:
 *
 * <ul>
 *   <li>too few pixels: the shorter side grows by 16 (this also narrows the ratio, and cannot pass the cap, which is
 *       far above any side of an image that small);
 *   <li>otherwise (ratio above 3:1 or too many pixels): the longer side shrinks by 16 (this narrows the ratio and keeps
 *       the edge cap).
 * </ul>
 *
 * Rounding moves each side by at most 8, so the longer side ends at most 32 pixels beyond 3:1 and the pixel count a few
 * thousand beyond a bound, and no step undoes an earlier one: growing the shorter side never widens the ratio nor
 * reaches the upper pixel bound, shrinking the longer side never widens the ratio nor passes the cap. A run over every
 * size up to 4000x4000 at both caps, and every ratio up to 1000:1000, needed at most two steps (about a quarter of them
 * needed one). The loop is bounded anyway and fails loudly rather than ever returning an invalid size. Squares never
 * need a repair (their rounded side lies between 816 and 2880), so the side a square would grow or shrink first does
 * not make the result depend on orientation.
 */
public final class SizePolicy {

    /** The size for {@code auto} in {@code generate}, and when a base image's size cannot be read. */
    public static final ImageSize DEFAULT_SIZE = new ImageSize(1024, 1024);

    /** The edge cap for an explicit pixel size: the gateway's own limit. */
    public static final int PIXEL_SIZE_CAP = SizeLimits.MAX_EDGE;

    /** The edge cap for ratios and source proportions: the gateway's normal tier of about 1.5 megapixels. */
    public static final int NORMAL_CAP = 1536;

    /** The largest number accepted in a {@code size}, pixel side or ratio term. */
    public static final int MAX_NUMBER = 1_000_000;

    /** What a refusal says is accepted. */
    static final String ACCEPTED_FORMS =
            "use WIDTHxHEIGHT in pixels (e.g. 1536x1024), an aspect ratio W:H (e.g. 16:9), or auto";

    // The prepared values (gateway contract §6), keyed by the ratio in lowest terms. The 2K and 4K rows are sizes, not
    // ratios: a producer who
    // wants them writes them in pixels, and they pass as valid sizes.
    private static final Map<String, ImageSize> PREPARED = Map.of(
            "1:1", new ImageSize(1024, 1024),
            "2:3", new ImageSize(1024, 1536),
            "3:2", new ImageSize(1536, 1024),
            "16:9", new ImageSize(1536, 864),
            "9:16", new ImageSize(864, 1536),
            "4:3", new ImageSize(1536, 1152),
            "3:4", new ImageSize(1152, 1536),
            "4:5", new ImageSize(1232, 1536),
            "5:4", new ImageSize(1536, 1232));

    // At most 7 digits, so Integer.parseInt cannot overflow; the value is then checked against MAX_NUMBER.
    private static final Pattern PIXELS = Pattern.compile("([0-9]{1,7})[xX]([0-9]{1,7})");
    private static final Pattern RATIO = Pattern.compile("([0-9]{1,7}):([0-9]{1,7})");
    private static final Pattern NUMBERS = Pattern.compile("[+-]?[0-9]+[xX:][+-]?[0-9]+");

    private static final int MAX_QUOTED = 40;
    private static final int MAX_REPAIR_STEPS = 16;

    private SizePolicy() {}

    /**
     * Decides the size of a {@code generate} request.
     *
     * <p>A string is accepted or refused the same way for either operation; only {@code auto} differs. So a validator
     * may check the {@code size} of any request with this method before the base image of an edit is fetched.
     *
     * @param requested the request's {@code size}; {@code null} or blank means absent
     * @return the size to send, or a refusal naming the field
     */
    public static SizeDecision forGenerate(String requested) {
        return decide(requested, null);
    }

    /**
     * Decides the size of an {@code edit} request whose base image (the first reference) was inspected.
     *
     * @param requested the request's {@code size}; {@code null} or blank means absent
     * @param base the base image; {@code null}, or one whose size could not be read, gives {@link #DEFAULT_SIZE} for
     *     {@code auto}
     * @return the size to send, or a refusal naming the field
     */
    public static SizeDecision forEdit(String requested, ImageInfo base) {
        ImageSize sourceSize = base == null
                ? null
                : base.size()
                        .map(s -> fromSource(s.width(), s.height(), base.exifOrientation()))
                        .orElse(null);
        return decide(requested, sourceSize);
    }

    /**
     * The size that follows a source image's proportions (gateway contract §6, last rule): width and height swapped
     * when the EXIF orientation is 5 to 8 (the picture is displayed turned a quarter), then normalized at the 1536 cap.
     *
     * @param width the stored width in pixels, at least 1
     * @param height the stored height in pixels, at least 1
     * @param exifOrientation the EXIF orientation tag; any value outside 5..8, including invalid ones, means no swap
     * @return a size that satisfies {@link SizeLimits#isValid}
     */
    public static ImageSize fromSource(int width, int height, int exifOrientation) {
        ImageSize stored = new ImageSize(width, height);
        ImageSize shown = isQuarterTurn(exifOrientation) ? stored.swapped() : stored;
        return normalize(shown, NORMAL_CAP);
    }

    /**
     * Normalizes any size with the gateway's normalization (gateway contract §6) and the repair described on this class. A size that is already valid
     * comes back unchanged when {@code cap} is 3840; a lower cap may shrink it.
     *
     * @param wanted the size to approach
     * @param cap the longest edge allowed: a multiple of 16 from {@value #NORMAL_CAP} to 3840 (below 1536 the cap could
     *     not leave room for the minimum pixel count at 3:1)
     * @return a size that satisfies {@link SizeLimits#isValid}
     * @throws IllegalArgumentException when {@code cap} is out of that range
     */
    public static ImageSize normalize(ImageSize wanted, int cap) {
        if (cap < NORMAL_CAP || cap > SizeLimits.MAX_EDGE || cap % SizeLimits.SIDE_MULTIPLE != 0) {
            throw new IllegalArgumentException("cap must be a multiple of 16 from 1536 to 3840, got " + cap);
        }
        return normalize(wanted.width(), wanted.height(), cap);
    }

    private static SizeDecision decide(String requested, ImageSize sourceSize) {
        String trimmed = requested == null ? "" : requested.strip();
        if (trimmed.isEmpty() || trimmed.equalsIgnoreCase("auto")) {
            String asked = trimmed.isEmpty() ? null : trimmed;
            return sourceSize == null
                    ? new Accepted(asked, DEFAULT_SIZE, Basis.DEFAULT)
                    : new Accepted(asked, sourceSize, Basis.SOURCE_PROPORTIONS);
        }
        int[] pixels = terms(PIXELS, trimmed);
        if (pixels != null) {
            if (!inRange(pixels[0]) || !inRange(pixels[1])) {
                return outOfRange(trimmed, "width and height");
            }
            ImageSize size = new ImageSize(pixels[0], pixels[1]);
            return SizeLimits.isValid(size)
                    ? new Accepted(trimmed, size, Basis.AS_REQUESTED)
                    : new Accepted(trimmed, normalize(size, PIXEL_SIZE_CAP), Basis.NORMALIZED);
        }
        int[] ratio = terms(RATIO, trimmed);
        if (ratio != null) {
            int w = ratio[0];
            int h = ratio[1];
            if (!inRange(w) || !inRange(h)) {
                return outOfRange(trimmed, "both terms of a ratio");
            }
            int gcd = gcd(w, h);
            ImageSize prepared = PREPARED.get(w / gcd + ":" + h / gcd);
            return prepared != null
                    ? new Accepted(trimmed, prepared, Basis.PREPARED_VALUE)
                    : new Accepted(trimmed, forRatio(w / gcd, h / gcd, NORMAL_CAP), Basis.RATIO_NORMALIZED);
        }
        if (NUMBERS.matcher(trimmed).matches()) {
            // Looks like a size or ratio, but with a sign or too many digits: say what is wrong with the numbers.
            return outOfRange(trimmed, trimmed.contains(":") ? "both terms of a ratio" : "width and height");
        }
        return new Refused("size " + quote(trimmed) + " is not accepted: " + ACCEPTED_FORMS);
    }

    /** The two numbers of {@code text} when it has the form {@code form} (two groups of digits), else null. */
    private static int[] terms(Pattern form, String text) {
        Matcher matcher = form.matcher(text);
        return matcher.matches()
                ? new int[] {Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(2))}
                : null;
    }

    /** The largest size of ratio {@code w:h} (clamped to 3:1) with longest edge {@code cap}, normalized; tested directly. */
    static ImageSize forRatio(int w, int h, int cap) {
        // Clamp first, so that 10:1 means 3:1 at the cap (1536x512) rather than a 3:1 sliver scaled up afterwards.
        Sides clamped = new Sides(w, h).clampedRatio();
        Sides scaled = clamped.scaled(cap / Math.max(clamped.width(), clamped.height()));
        return normalize(scaled.width(), scaled.height(), cap);
    }

    private static ImageSize normalize(double width, double height, int cap) {
        // 1. Clamp the ratio to 3:1 by reducing the longer side.
        // 2. Scale down so that the longest edge is at most the cap.
        Sides sides = new Sides(width, height).clampedRatio().cappedAt(cap);
        // 3. Scale down if there are too many pixels.
        if (sides.pixels() > SizeLimits.MAX_PIXELS) {
            sides = sides.scaled(Math.sqrt(SizeLimits.MAX_PIXELS / sides.pixels()));
        }
        // 4. Scale up if there are too few pixels, then re-cap: the cap wins. With a cap of at least 1536 and a ratio
        // of at most 3:1 the re-cap never takes the size below the minimum again (1536 x 512 > 655,360).
        if (sides.pixels() < SizeLimits.MIN_PIXELS) {
            sides = sides.scaled(Math.sqrt(SizeLimits.MIN_PIXELS / sides.pixels()))
                    .cappedAt(cap);
        }
        // 5. Round each side to the nearest multiple of 16, at least 16; then repair what rounding broke.
        return repair(roundToMultiple(sides.width()), roundToMultiple(sides.height()));
    }

    /** Width and height on their way to a size, before rounding. */
    private record Sides(double width, double height) {

        /** The longer side reduced so that the ratio is at most 3:1. */
        Sides clampedRatio() {
            if (width > SizeLimits.MAX_RATIO * height) {
                return new Sides(SizeLimits.MAX_RATIO * height, height);
            }
            if (height > SizeLimits.MAX_RATIO * width) {
                return new Sides(width, SizeLimits.MAX_RATIO * width);
            }
            return this;
        }

        /** Scaled down, when needed, so that the longest side is at most {@code cap}. */
        Sides cappedAt(int cap) {
            double longest = Math.max(width, height);
            return longest > cap ? scaled(cap / longest) : this;
        }

        Sides scaled(double factor) {
            return new Sides(width * factor, height * factor);
        }

        double pixels() {
            return width * height;
        }
    }

    private static int roundToMultiple(double side) {
        long multiples = Math.round(side / SizeLimits.SIDE_MULTIPLE);
        return (int) Math.max(SizeLimits.SIDE_MULTIPLE, multiples * SizeLimits.SIDE_MULTIPLE);
    }

    /** Steps a rounded size by 16 pixels at a time until it is valid; see the class comment for why this ends. */
    private static ImageSize repair(int width, int height) {
        int w = width;
        int h = height;
        for (int step = 0; step <= MAX_REPAIR_STEPS; step++) {
            ImageSize size = new ImageSize(w, h);
            if (SizeLimits.isValid(size)) {
                return size;
            }
            if (size.pixels() < SizeLimits.MIN_PIXELS) {
                // Grow the shorter side: more pixels and a narrower ratio, never past the cap.
                if (w <= h) {
                    w += SizeLimits.SIDE_MULTIPLE;
                } else {
                    h += SizeLimits.SIDE_MULTIPLE;
                }
            } else {
                // Ratio beyond 3:1 or too many pixels: shrink the longer side.
                if (w >= h) {
                    w -= SizeLimits.SIDE_MULTIPLE;
                } else {
                    h -= SizeLimits.SIDE_MULTIPLE;
                }
            }
        }
        throw new IllegalStateException("size normalization did not converge from " + width + "x" + height);
    }

    private static boolean isQuarterTurn(int exifOrientation) {
        // EXIF orientations 5 to 8 are the transposed ones: the stored rows are the displayed columns.
        return exifOrientation >= 5 && exifOrientation <= 8;
    }

    private static boolean inRange(int n) {
        return n >= 1 && n <= MAX_NUMBER;
    }

    private static int gcd(int a, int b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    private static Refused outOfRange(String value, String what) {
        return new Refused("size " + quote(value) + " is not accepted: " + what + " must be whole numbers from 1 to "
                + MAX_NUMBER + "; " + ACCEPTED_FORMS);
    }

    private static String quote(String value) {
        // The value goes back to the producer in an event: bound it so a huge string does not travel back.
        return "\"" + (value.length() <= MAX_QUOTED ? value : value.substring(0, MAX_QUOTED) + "...") + "\"";
    }
}
