package io.imageworker.messaging.sidetopics;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.processing.Cancellations;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A storm of cancels of one id on the cancel topic (which producers write), beside {@link HostileSideTopicsTest}: 5
 * million of them are handed to the reader's own {@code apply} directly, not through the broker, which would take
 * minutes for them, and the heap is measured before and after.
 *
 * <p>Isolated: it measures the JVM's heap, which a test class running beside it would grow. Only this case is, so
 * that the other side-topic cases run beside the rest of the suite.
 */
@Isolated
class CancelStormHeapTest {

    private CancelReader reader;

    @AfterEach
    void stop() {
        if (reader != null) {
            reader.stop();
        }
    }

    @Test
    void fiveMillionCancelsOfOneIdHoldOneEntryAndTheHeapStaysFlat() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Instant now = Instant.parse("2026-01-05T10:00:00Z");
        Clock clock = Clock.fixed(now, ZoneOffset.UTC);
        Cancellations cancellations =
                new Cancellations(clock, Duration.ofHours(2), Cancellations.MAX_HELD_BYTES, true, registry);
        reader = CancelReaderBrokerTest.unstarted(
                "image-cancel-unread", cancellations, registry, new ByteArrayDeserializer());
        byte[] value = bytes(cancel("same"));
        long before = usedHeap();

        // Each one later than the last (all within the retention, none ahead of the clock): each replaces the last.
        for (int i = 0; i < 5_000_000; i++) {
            long at = now.toEpochMilli() - 5_000_000 + i;
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

        assertThat(cancellations.held()).isEqualTo(1);
        assertThat(cancellations.heldBytes()).isEqualTo(Cancellations.bytesOf("same"));
        assertThat(cancellations.isCancelled("same")).isTrue();
        assertThat(grown).as("heap grown by the storm, in bytes").isLessThan(16L * 1024 * 1024);
    }

    /** The heap in use after a collection. */
    private static long usedHeap() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static String cancel(String requestId) {
        return "{\"requestId\":\"" + requestId + "\"}";
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
