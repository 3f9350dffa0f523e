package io.imageworker.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The console's memory when 100,000 results pass through its topics: each read as the reader reads it ({@link
 * ConsoleEvents#read}) and handed to the feed, in a JVM of its own that the test starts (so that its heap is the
 * feed's alone), the heap measured before and after. Twice: completed results with the default bound of entries, and
 * failures with 3 KiB gateway bodies and no bound of entries that bites, so that the bound in bytes has to hold.
 */
class ConsoleFeedHeapTest {

    static final int RESULTS = 100_000;

    @Test
    void oneHundredThousandResultsLeaveTheFeedWithinItsBounds() throws Exception {
        Map<String, String> figures = Passage.run();

        assertThat(figures).containsEntry("completed-entries", "10000");
        assertThat(Long.parseLong(figures.get("completed-heap-grown")))
                .as("heap grown by 100,000 completed results, in bytes")
                .isLessThan(ConsoleFeed.MAX_BYTES);
        assertThat(Long.parseLong(figures.get("failed-bytes"))).isLessThanOrEqualTo(ConsoleFeed.MAX_BYTES);
        assertThat(Long.parseLong(figures.get("failed-entries"))).isBetween(1000L, 9999L);
        assertThat(Long.parseLong(figures.get("failed-heap-grown")))
                .as("heap grown by 100,000 failures of 3 KiB gateway bodies, in bytes")
                .isLessThan(ConsoleFeed.MAX_BYTES + ConsoleFeed.MAX_BYTES / 4);
        // The count of bytes is not below what the heap holds (it is the bound that is enforced).
        assertThat(Long.parseLong(figures.get("failed-heap-grown")))
                .isLessThanOrEqualTo(Long.parseLong(figures.get("failed-bytes")) + 2L * 1024 * 1024);
        assertThat(Long.parseLong(figures.get("completed-heap-grown")))
                .isLessThanOrEqualTo(Long.parseLong(figures.get("completed-bytes")) + 2L * 1024 * 1024);
    }

    /** The passage of the results, in the JVM that {@link #run()} starts: prints one {@code name=value} per figure. */
    static final class Passage {

        private Passage() {}

        static Map<String, String> run() throws Exception {
            String java = ProcessHandle.current().info().command().orElse("java");
            String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            Process passage = new ProcessBuilder(List.of(
                            java,
                            "-Xmx256m",
                            "-XX:+UseSerialGC",
                            "-Djava.util.logging.manager=org.jboss.logmanager.LogManager",
                            "-cp",
                            classPath,
                            Passage.class.getName()))
                    .redirectErrorStream(true)
                    .start();
            String output = new String(passage.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(passage.waitFor(2, TimeUnit.MINUTES)).as(output).isTrue();
            assertThat(passage.exitValue()).as(output).isZero();
            Map<String, String> figures = new HashMap<>();
            output.lines()
                    .filter(line -> line.startsWith("console "))
                    .map(line -> line.substring("console ".length()).split("=", 2))
                    .forEach(pair -> figures.put(pair[0], pair[1]));
            System.out.println("ConsoleFeedHeapTest: " + figures);
            assertThat(figures).as(output).isNotEmpty();
            return figures;
        }

        public static void main(String[] args) {
            ObjectMapper json = new ObjectMapper();
            long before = usedHeap();
            ConsoleFeed completed = new ConsoleFeed(10_000, ConsoleFeed.MAX_BYTES);
            for (int i = 0; i < RESULTS; i++) {
                completed.apply(ConsoleFeedTest.completed("req-" + i + "-7f3a9c2e", "producer-" + (i % 7), 1));
            }
            long grown = usedHeap() - before;
            print("completed-entries", completed.size());
            print("completed-bytes", completed.bytes());
            print("completed-heap-grown", grown);
            completed = null;

            before = usedHeap();
            ConsoleFeed failed = new ConsoleFeed(RESULTS, ConsoleFeed.MAX_BYTES);
            String body = "{\"error\":{\"type\":\"invalid_request_error\",\"message\":\"" + "y".repeat(3000) + "\"}}";
            for (int i = 0; i < RESULTS; i++) {
                // Each body its own string, as each record's would be.
                String own = i + body;
                ConsoleEvents.read(
                                json, ConsoleEvents.Kind.FAILED, ConsoleFeedTest.failed("f-" + i, "REJECTED", own), i)
                        .ifPresent(failed::apply);
            }
            grown = usedHeap() - before;
            print("failed-entries", failed.size());
            print("failed-bytes", failed.bytes());
            print("failed-heap-grown", grown);
            print("failed-forgotten", failed.forgotten());
        }

        private static void print(String name, long value) {
            System.out.println("console " + name + "=" + value);
        }

        /** The heap in use after a collection. */
        private static long usedHeap() {
            for (int i = 0; i < 3; i++) {
                System.gc();
            }
            return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        }
    }
}
