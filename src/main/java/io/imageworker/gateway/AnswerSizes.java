package io.imageworker.gateway;

import io.imageworker.memory.MemoryBudget;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * How many bytes a gateway call holds in the memory budget ({@code memory.MemoryBudget}), and when.
 *
 * <ul>
 *   <li><b>While it waits for its answer</b> (seconds to minutes), only its read window: what its answer may bring in
 *       before reading pauses, {@value #WINDOW} bytes at most, less when the answers seen are smaller
 *       ({@link #beforeCall}). Thousands of calls can wait at once.
 *   <li><b>When its answer starts to arrive</b>, the answer's body plus the image decoded from it: 7/4 of a declared
 *       {@code Content-Length} ({@link #forAnswer}), or, for an answer without one, the {@linkplain #estimate
 *       estimate} learned from the answers seen. The response stays paused until the budget admits them.
 * </ul>
 *
 * <p>The estimate, per pixel of the size sent: before any answer, an incompressible RGBA image (4 bytes a pixel) read as
 * base64 and decoded beside it, 4 x (1 + 4/3) bytes a pixel, 39 MB for 2048x2048; after that, the largest of the last
 * {@value #REMEMBERED} answers per pixel, with a margin. A larger answer than estimated is held anyway as it comes
 * (the budget is then briefly exceeded) and raises the next estimates.
 */
@ApplicationScoped
public class AnswerSizes {

    /** Bytes a pixel before any answer is seen. */
    static final double FIRST_GUESS_PER_PIXEL = 4 * (1 + 4.0 / 3);

    /** Answers remembered. */
    static final int REMEMBERED = 64;

    /** Added to the largest answer seen: sizes vary from one picture to the next. */
    static final double MARGIN = 1.1;

    /** The least an answer is estimated at: an error answer, a small image. */
    static final long FLOOR = 8 * 1024;

    /** The most a call reserves before it leaves ({@link MemoryBudget#READ_WINDOW}). */
    static final long WINDOW = MemoryBudget.READ_WINDOW;

    private final long most;
    private final double[] perPixel = new double[REMEMBERED];
    // Guarded by this.
    private int next;
    private int seen;

    @Inject
    AnswerSizes(GatewaySettings config) {
        this(config.maxResponseBytes());
    }

    /** Sizes of answers of at most {@code maxResponseBytes}. */
    AnswerSizes(long maxResponseBytes) {
        // A body at the cap, and the image it decodes to.
        this.most = maxResponseBytes + maxResponseBytes * 3 / 4;
    }

    /**
     * The bytes a call sent with {@code size} reserves before it leaves and holds while it waits for its answer: its
     * read window, or the estimate of its answer when that is smaller.
     */
    public long beforeCall(String size) {
        return Math.min(WINDOW, estimate(size));
    }

    /**
     * The bytes an answer that declared {@code contentLength} holds while it is read and decoded: its body and the
     * image its base64 decodes to (3/4 of it); for an answer without a length ({@code -1}), the {@link #estimate}.
     */
    public long forAnswer(String size, long contentLength) {
        return contentLength >= 0 ? contentLength + contentLength * 3 / 4 : estimate(size);
    }

    /** The bytes an answer to a call sent with {@code size} ({@code WIDTHxHEIGHT}) is estimated to hold. */
    public long estimate(String size) {
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
