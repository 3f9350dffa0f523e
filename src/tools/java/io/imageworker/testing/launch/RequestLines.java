package io.imageworker.testing.launch;

import java.io.IOException;
import java.io.Reader;
import java.util.function.LongConsumer;

/**
 * The lines of a local run's input ({@link LocalRun}: one request a line), each held to at most a bound: a longer one
 * (a file that is no list of requests, {@code < /dev/zero}) is read to its end and skipped, and its length told,
 * instead of being held whole; a whole line of {@code /dev/zero} once ran the tool out of heap.
 */
final class RequestLines {

    /** The longest line kept: 1 MiB, above the largest record the request topic takes by default. */
    static final int MAX_CHARS = 1 << 20;

    private final Reader in;
    private final int max;
    private final StringBuilder line = new StringBuilder();

    RequestLines(Reader in) {
        this(in, MAX_CHARS);
    }

    RequestLines(Reader in, int max) {
        this.in = in;
        this.max = max;
    }

    /**
     * The next line kept, without its end ({@code \n}, {@code \r\n}), or null at the end of the input. A line longer
     * than the bound is skipped: {@code tooLong} is told its length, and the line after it is returned.
     */
    String next(LongConsumer tooLong) throws IOException {
        while (true) {
            line.setLength(0);
            long length = 0;
            int c;
            while ((c = in.read()) >= 0 && c != '\n') {
                length++;
                if (length <= max) {
                    line.append((char) c);
                }
            }
            if (c < 0 && length == 0) {
                return null;
            }
            if (length > max) {
                tooLong.accept(length);
                if (c < 0) {
                    return null;
                }
                continue;
            }
            int end = line.length();
            return end > 0 && line.charAt(end - 1) == '\r' ? line.substring(0, end - 1) : line.toString();
        }
    }
}
