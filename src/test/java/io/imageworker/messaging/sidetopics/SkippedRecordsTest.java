package io.imageworker.messaging.sidetopics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jboss.logmanager.ExtLogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A storm of skipped records costs a counter each and a bounded number of log lines: one per {@link
 * SkippedRecords#LOG_EVERY}, the next saying how many went unlogged.
 *
 * <p>Isolated: it counts the lines of {@link SkippedRecords}' logger, which a test class running beside it could also
 * write to.
 */
@Isolated
class SkippedRecordsTest {

    private final Logger logger = Logger.getLogger(SkippedRecords.class.getName());
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            lines.add(record instanceof ExtLogRecord ext ? ext.getFormattedMessage() : record.getMessage());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    @AfterEach
    void detach() {
        logger.removeHandler(capture);
    }

    @Test
    void aStormIsCountedInFullAndLoggedOncePerPeriodWithTheCountNotLogged() {
        logger.addHandler(capture);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        AtomicLong nanos = new AtomicLong();
        SkippedRecords skipped = new SkippedRecords(
                registry, SideTopicMetrics.CANCEL, SkippedRecords.CANCEL, "Cancellation", nanos::get);

        for (int i = 0; i < 100_000; i++) {
            skipped.skip(record(i), SkippedRecords.Reason.UNREADABLE, "no requestId");
            nanos.addAndGet(Duration.ofMillis(1).toNanos());
        }
        // 100 s of storm: one line at its start, then one per 30 s.
        nanos.addAndGet(SkippedRecords.LOG_EVERY.toNanos());
        skipped.skip(record(100_000), SkippedRecords.Reason.UNREADABLE, "no requestId");

        assertThat(skipped.count(SkippedRecords.Reason.UNREADABLE)).isEqualTo(100_001);
        assertThat(registry.get(SkippedRecords.METRIC)
                        .tag("topic", "cancel")
                        .tag("reason", "unreadable")
                        .counter()
                        .count())
                .isEqualTo(100_001);
        assertThat(lines).hasSize(5);
        assertThat(lines.get(0)).contains("skipping record 0 of cancel-0", "unreadable", "no requestId");
        assertThat(lines.get(1)).contains("29999 more skipped since the last line");
        assertThat(lines.get(4)).contains("skipping record 100000", "9999 more skipped");
    }

    private static ConsumerRecord<byte[], byte[]> record(long offset) {
        return new ConsumerRecord<>("cancel", 0, offset, null, new byte[0]);
    }
}
