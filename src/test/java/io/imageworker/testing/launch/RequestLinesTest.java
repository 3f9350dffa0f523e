package io.imageworker.testing.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestLinesTest {

    private final List<Long> skipped = new ArrayList<>();

    @Test
    void linesComeWithoutTheirEnds() throws IOException {
        RequestLines lines = new RequestLines(new StringReader("a red bicycle\r\n{\"prompt\":\"x\"}\n\nlast"));

        assertThat(all(lines)).containsExactly("a red bicycle", "{\"prompt\":\"x\"}", "", "last");
        assertThat(skipped).isEmpty();
    }

    @Test
    void aLineAboveTheBoundIsSkippedAndTheNextOneKept() throws IOException {
        RequestLines lines = new RequestLines(new StringReader("12345\n123456789\nnext\n"), 5);

        assertThat(all(lines)).containsExactly("12345", "next");
        assertThat(skipped).containsExactly(9L);
    }

    /** The input that ran the tool out of heap: endless characters, no line end. Held to the bound, not whole. */
    @Test
    void anEndlessLineIsReadWithoutHoldingIt() throws IOException {
        long length = 4L * RequestLines.MAX_CHARS;
        RequestLines lines = new RequestLines(new BufferedReader(new Zeros(length)));

        assertThat(all(lines)).isEmpty();
        assertThat(skipped).containsExactly(length);
    }

    private List<String> all(RequestLines lines) throws IOException {
        List<String> read = new ArrayList<>();
        String line;
        while ((line = lines.next(skipped::add)) != null) {
            read.add(line);
        }
        return read;
    }

    /** {@code length} NUL characters, as {@code /dev/zero} gives, then the end. */
    private static final class Zeros extends Reader {
        private long left;

        Zeros(long length) {
            this.left = length;
        }

        @Override
        public int read(char[] buffer, int offset, int length) {
            if (left == 0) {
                return -1;
            }
            int n = (int) Math.min(length, left);
            Arrays.fill(buffer, offset, offset + n, '\0');
            left -= n;
            return n;
        }

        @Override
        public void close() {}
    }
}
