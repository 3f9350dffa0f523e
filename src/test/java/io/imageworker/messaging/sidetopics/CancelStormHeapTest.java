package io.imageworker.messaging.sidetopics;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.processing.Cancellations;
import io.imageworker.support.WorkerThreads;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

/**
 * A storm of cancels of one id on the cancel topic (which producers write), beside {@link HostileSideTopicsTest}: 5
 * million of them are handed to the reader's own {@code apply} directly, not through the broker, which would take
 * minutes for them, and the heap is measured before and after.
 *
 * <p>In a JVM of its own ({@link Storm}, on the tests' class path), which prints its figures: its heap is the storm's
 * alone while the other test classes run beside this one in the test JVM (where the case had to run alone, after all
 * the others: 15 to 22 s of the suite with one core idle).
 */
class CancelStormHeapTest {

    private static final int CANCELS = 5_000_000;

    @Test
    void fiveMillionCancelsOfOneIdHoldOneEntryAndTheHeapStaysFlat() throws Exception {
        Map<String, String> figures = Storm.run();

        assertThat(figures).containsEntry("cancels", Integer.toString(CANCELS));
        assertThat(figures).containsEntry("held", "1");
        assertThat(figures)
                .containsEntry(
                        "held-bytes",
                        Long.toString(Cancellations.bytesOf("same") + Cancellations.bytesOfProducer("default")));
        assertThat(figures).containsEntry("cancelled", "true");
        assertThat(Long.parseLong(figures.get("heap-grown")))
                .as("heap grown by the storm, in bytes")
                .isLessThan(16L * 1024 * 1024);
    }

    /** The storm, in the JVM that {@link #run()} starts: prints one {@code name=value} line per figure. */
    static final class Storm {

        private Storm() {}

        /** Runs {@link #main} in a JVM of its own and returns the figures it printed. */
        static Map<String, String> run() throws Exception {
            String java = ProcessHandle.current().info().command().orElse("java");
            String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            Process storm = new ProcessBuilder(List.of(
                            java,
                            "-Xmx512m",
                            "-Djava.util.logging.manager=org.jboss.logmanager.LogManager",
                            "-cp",
                            classPath,
                            Storm.class.getName()))
                    .redirectErrorStream(true)
                    .start();
            String output = new String(storm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(storm.waitFor(2, TimeUnit.MINUTES)).as(output).isTrue();
            assertThat(storm.exitValue()).as(output).isZero();
            Map<String, String> figures = new HashMap<>();
            output.lines()
                    .filter(line -> line.startsWith("storm "))
                    .map(line -> line.substring("storm ".length()).split("=", 2))
                    .forEach(pair -> figures.put(pair[0], pair[1]));
            assertThat(figures).as(output).isNotEmpty();
            return figures;
        }

        public static void main(String[] args) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            Instant now = Instant.parse("2026-01-05T10:00:00Z");
            Clock clock = Clock.fixed(now, ZoneOffset.UTC);
            Cancellations cancellations =
                    new Cancellations(clock, Duration.ofHours(2), Cancellations.MAX_HELD_BYTES, true, registry);
            // Never started: no broker is reached; only its apply is used.
            CancelReader reader = new CancelReader(
                    Optional.of("image-cancel-unread"),
                    cancellations,
                    Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1"),
                    new ObjectMapper(),
                    registry,
                    settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer()),
                    System::nanoTime,
                    new WorkerThreads());
            byte[] value = "{\"requestId\":\"same\"}".getBytes(StandardCharsets.UTF_8);
            long before = usedHeap();

            // Each one later than the last (all within the retention, none ahead of the clock): each replaces the last.
            for (int i = 0; i < CANCELS; i++) {
                long at = now.toEpochMilli() - CANCELS + i;
                reader.apply(new ConsumerRecord<>(
                        "image-cancel",
                        0,
                        i,
                        at,
                        TimestampType.CREATE_TIME,
                        0,
                        value.length,
                        null,
                        value,
                        new RecordHeaders(),
                        Optional.empty()));
            }
            long grown = usedHeap() - before;

            System.out.println("storm cancels=" + CANCELS);
            System.out.println("storm held=" + cancellations.held());
            System.out.println("storm held-bytes=" + cancellations.heldBytes());
            System.out.println("storm cancelled=" + cancellations.isCancelled("same"));
            System.out.println("storm heap-grown=" + grown);
            reader.stop();
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
