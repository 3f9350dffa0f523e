package io.imageworker.messaging.sidetopics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.TopicSettings;
import io.imageworker.spend.BudgetLedger;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The budget log's reader outlives failures of its consumer: it resumes after the last record it read, reports itself
 * stalled while it cannot read, and ends with the log. Kafka's {@link MockConsumer} stands in for the consumer, because
 * what is tested is the restart, not Kafka (KafkaBudgetLogBrokerTest and FleetBudgetIT run the log on a real broker).
 */
class KafkaBudgetLogTest {

    private static final String TOPIC = "budget-test";
    private static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);
    private static final Duration WINDOW = Duration.ofHours(1);
    private static final int CAP = 2;

    private final ObjectMapper json = new ObjectMapper();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicLong nanos = new AtomicLong();
    private final Queue<TestConsumer> consumers = new ArrayDeque<>();
    private final List<TestConsumer> opened = new ArrayList<>();
    private final long window = System.currentTimeMillis() / WINDOW.toMillis();
    private KafkaBudgetLog log;

    private KafkaBudgetLog log(Duration firstBackoff) {
        Map<String, String> budget = Map.of(
                "image-worker.topic.budget",
                TOPIC,
                "image-worker.budget.window",
                "1h",
                "image-worker.budget.max-calls",
                Integer.toString(CAP));
        log = new KafkaBudgetLog(
                TestConfig.settings(TopicSettings.class, budget),
                TestConfig.settings(BudgetSettings.class, budget),
                Map.of(),
                json,
                registry,
                settings -> {
                    TestConsumer next = consumers.remove();
                    opened.add(next);
                    return next;
                },
                nanos::get,
                firstBackoff,
                new WorkerThreads());
        return log;
    }

    @AfterEach
    void stop() {
        if (log != null) {
            log.stop();
        }
    }

    @Test
    void aReaderThatFailsResumesAfterTheLastRecordItReadAndCountsTheRestart() {
        TestConsumer first = new TestConsumer(0, 0, null);
        TestConsumer second = new TestConsumer(0, 2, null);
        consumers.addAll(List.of(first, second));
        // The log as the second reader finds it: the two claims read already, and a release of the first.
        second.schedulePollTask(() -> {
            second.addRecord(record(0, claim("a")));
            second.addRecord(record(1, claim("b")));
            second.addRecord(record(2, release("a")));
        });
        KafkaBudgetLog log = fillTheBudgetThenFailTheFirstReader(first, "the broker answered nonsense");

        await().atMost(Duration.ofSeconds(5)).until(() -> log.used(window) == 1);
        assertThat(first.closed()).isTrue();
        assertThat(first.delivered).containsExactly(0L, 1L);
        assertThat(second.delivered).as("no record read twice").containsExactly(2L);
        assertThat(restarts()).isEqualTo(1);
        assertThat(log.reading()).isTrue();
        await().atMost(Duration.ofSeconds(5)).until(() -> log.stall().isEmpty());
    }

    @Test
    void aReaderWhoseNextRecordIsGoneReadsTheWindowAgainFromItsStartWithANewLedger() {
        TestConsumer first = new TestConsumer(0, 0, null);
        // Retention (or a topic made again) took offsets below 5; the window's first record is at 5.
        TestConsumer second = new TestConsumer(5, 7, 5L);
        consumers.addAll(List.of(first, second));
        second.schedulePollTask(() -> {
            second.addRecord(record(5, release("a")));
            second.addRecord(record(6, claim("c")));
        });
        KafkaBudgetLog log = fillTheBudgetThenFailTheFirstReader(first, "offset out of range");

        await().atMost(Duration.ofSeconds(5)).until(() -> second.delivered.size() == 2);
        assertThat(second.delivered).containsExactly(5L, 6L);
        // Judged afresh from the window's start: only c holds a place (on the old ledger b would hold one too).
        await().atMost(Duration.ofSeconds(5)).until(() -> log.used(window) == 1);
        await().atMost(Duration.ofSeconds(5)).until(() -> log.stall().isEmpty());
    }

    @Test
    void aReaderWaitingToRestartReportsTheBudgetStalledAndStoppingEndsItsWait() {
        TestConsumer first = new TestConsumer(0, 0, null);
        consumers.add(first);
        KafkaBudgetLog log = log(Duration.ofHours(1));
        log.startReading();
        await().atMost(Duration.ofSeconds(5)).until(() -> first.polls > 0);
        assertThat(log.stall()).isEmpty();

        first.setPollException(new KafkaException("authorization failed"));

        await().atMost(Duration.ofSeconds(5)).until(() -> log.stall().isPresent());
        assertThat(log.stall().get()).contains("restarting", "failures so far: 1");
        log.stop();
        await().atMost(Duration.ofSeconds(2)).until(() -> !log.reading());
        assertThat(consumers).as("no consumer made after the stop").isEmpty();
    }

    @Test
    void aReaderThatCompletesNoPollForLongerThanTheBoundReportsTheBudgetStalled() throws Exception {
        TestConsumer first = new TestConsumer(0, 0, null);
        consumers.add(first);
        KafkaBudgetLog log = log(Duration.ofMillis(10));
        log.startReading();
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        first.schedulePollTask(() -> {
            blocked.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(blocked.await(5, TimeUnit.SECONDS)).isTrue();

        nanos.addAndGet(TopicReader.STALL_AFTER.toNanos());
        assertThat(log.stall()).as("at the bound").isEmpty();
        nanos.addAndGet(Duration.ofMillis(1).toNanos());
        assertThat(log.stall()).hasValueSatisfying(why -> assertThat(why).contains("no poll"));

        release.countDown();
        await().atMost(Duration.ofSeconds(5)).until(() -> log.stall().isEmpty());
        assertThat(restarts()).isZero();
    }

    /**
     * Starts the log, lets {@code first} read the claims of a and b (offsets 0 and 1, the cap reached), then makes its
     * next poll fail with {@code failure}: how the tests of a reader that fails after reading begin.
     */
    private KafkaBudgetLog fillTheBudgetThenFailTheFirstReader(TestConsumer first, String failure) {
        KafkaBudgetLog log = log(Duration.ofMillis(10));
        log.startReading();
        first.schedulePollTask(() -> {
            first.addRecord(record(0, claim("a")));
            first.addRecord(record(1, claim("b")));
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> log.used(window) == CAP);

        first.setPollException(new KafkaException(failure));
        return log;
    }

    private double restarts() {
        return registry.get("image_worker_budget_reader_restarts").counter().count();
    }

    /** The claim whose secret is {@code secret}. */
    private BudgetLedger.Entry claim(String secret) {
        return new BudgetLedger.Entry(BudgetLedger.Kind.CLAIM, BudgetLedger.claimOf(secret), window, CAP);
    }

    /** The release of the claim of {@code secret}, as its writer writes it. */
    private BudgetLedger.Entry release(String secret) {
        return BudgetLedger.Entry.release(BudgetLedger.FLEET, secret, window);
    }

    private ConsumerRecord<byte[], byte[]> record(long offset, BudgetLedger.Entry entry) {
        try {
            return new ConsumerRecord<>(
                    TOPIC,
                    0,
                    offset,
                    new byte[0],
                    json.writeValueAsBytes(new KafkaBudgetLog.Record(
                            entry.kind(),
                            entry.claim(),
                            entry.window(),
                            entry.limit(),
                            "test",
                            entry.scope(),
                            entry.secret())));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A mock consumer of the budget partition holding offsets {@code first} to {@code end}, whose window starts at
     * {@code windowStart} (none: no record of the window yet), that notes the offsets it delivers and, like a real
     * consumer, waits a little in a poll that finds nothing instead of returning at once.
     */
    private static final class TestConsumer extends MockConsumer<byte[], byte[]> {

        final List<Long> delivered = new java.util.concurrent.CopyOnWriteArrayList<>();
        volatile int polls;
        private final Long windowStart;

        TestConsumer(long first, long end, Long windowStart) {
            super("none");
            this.windowStart = windowStart;
            updateBeginningOffsets(Map.of(PARTITION, first));
            updateEndOffsets(Map.of(PARTITION, end));
        }

        @Override
        public synchronized ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
            ConsumerRecords<byte[], byte[]> records = super.poll(timeout);
            records.forEach(record -> delivered.add(record.offset()));
            polls++;
            if (records.isEmpty()) {
                LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
            }
            return records;
        }

        @Override
        public synchronized Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(Map<TopicPartition, Long> times) {
            Map<TopicPartition, OffsetAndTimestamp> found = new HashMap<>();
            found.put(
                    PARTITION, windowStart == null ? null : new OffsetAndTimestamp(windowStart, times.get(PARTITION)));
            return found;
        }
    }
}
