package io.imageworker.gateway;

import io.imageworker.config.WorkerConfig;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * How many bytes a gateway call will hold, for its reservation in the memory budget before it is sent
 * ({@code memory.MemoryBudget}): the answer's body while it is read plus the image decoded from it, per pixel of the
 * size sent, learned from the answers seen.
 *
 * <p>Before any answer, the guess is an incompressible RGBA image (4 bytes a pixel) read as base64 and decoded beside
 * it: 4 x (1 + 4/3) bytes a pixel, 39 MB for 2048x2048. After that, the largest of the last {@value #REMEMBERED} answers
 * per pixel, with a margin: a model whose PNGs compress well reserves what they take, and a larger answer than
 * reserved is held anyway when it comes (the budget is then briefly exceeded) and raises the next reservations.
 */
@ApplicationScoped
public class AnswerSizes {

    /** Bytes a pixel before any answer is seen. */
    static final double FIRST_GUESS_PER_PIXEL = 4 * (1 + 4.0 / 3);

    /** Answers remembered. */
    static final int REMEMBERED = 64;

    /** Added to the largest answer seen: sizes vary from one picture to the next. */
    static final double MARGIN = 1.1;

    /** The least a call reserves: an error answer, a small image. */
    static final long FLOOR = 64 * 1024;

    private final long most;
    private final double[] perPixel = new double[REMEMBERED];
    // Guarded by this.
    private int next;
    private int seen;

    @Inject
    AnswerSizes(WorkerConfig config) {
        this(config.gateway().maxResponseBytes());
    }

    /** Sizes of answers of at most {@code maxResponseBytes}. */
    AnswerSizes(long maxResponseBytes) {
        // A body at the cap, and the image it decodes to.
        this.most = maxResponseBytes + maxResponseBytes * 3 / 4;
    }

    /** The bytes to reserve for a call sent with {@code size} ({@code WIDTHxHEIGHT}). */
    public long reservation(String size) {
        long pixels = pixels(size);
        double guess;
        synchronized (this) {
            guess = seen == 0 ? FIRST_GUESS_PER_PIXEL : largest() * MARGIN;
        }
        return Math.max(FLOOR, Math.min(most, (long) (pixels * guess)));
    }

    /** A call sent with {@code size} held {@code bytes} at its peak (its answer and the image decoded from it). */
    public void observe(String size, long bytes) {
        long pixels = pixels(size);
        if (pixels <= 0 || bytes <= 0) {
            return;
        }
        synchronized (this) {
            perPixel[next] = (double) bytes / pixels;
            next = (next + 1) % REMEMBERED;
            seen = Math.min(REMEMBERED, seen + 1);
        }
    }

    private double largest() {
        double largest = 0;
        for (int i = 0; i < seen; i++) {
            largest = Math.max(largest, perPixel[i]);
        }
        return largest;
    }

    /** Pixels of {@code WIDTHxHEIGHT}; 1024x1024 when it is not one (never: the planner sends only such sizes). */
    static long pixels(String size) {
        int x = size == null ? -1 : size.indexOf('x');
        if (x > 0) {
            try {
                return Long.parseLong(size.substring(0, x)) * Long.parseLong(size.substring(x + 1));
            } catch (NumberFormatException ignored) {
                // Falls through to the default.
            }
        }
        return 1024L * 1024;
    }
}
