package io.imageworker.messaging.sidetopics;

import io.imageworker.support.WorkerMetrics;
import io.imageworker.support.WorkerThreads;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;

/**
 * A Kafka topic read by a plain consumer on a daemon thread of its own (its poll blocks; made, and stopped at shutdown,
 * by {@link WorkerThreads}), with no consumer group, for as long as the worker runs: the spend guard's budget log
 * ({@link KafkaBudgetLog}) and the cancel topic ({@link CancelReader}) are read this way, each handing its records to
 * its own {@link Records}.
 *
 * <p>A failure (a record the client cannot read, an error of the broker or of the client) does not end the reading:
 * the consumer is closed and, after a back-off that grows while failures follow each other ({@link #FIRST_BACKOFF} to
 * {@link #MAX_BACKOFF}), a new one resumes at the record after the last one read in each partition, so that no record
 * is handled twice. Each restart is counted; {@link #stall()} says when the reader restarts or has completed no poll
 * for {@link #STALL_AFTER}.
 *
 * <p>A record the client reads but its handler fails on is not such a failure: anyone who may write the topic can
 * write it, and a reader that restarted at it would fail on it again, for as long as the topic keeps it. It is skipped
 * and counted ({@link SkippedRecords}, reason {@code failed}), and the reader goes on after it.
 */
public final class TopicReader {

    /** How long one poll waits for records. */
    static final Duration POLL = Duration.ofMillis(500);
    /**
     * How long the reader may go without completing a poll before it counts as stalled: three polls, plus room for a
     * collector pause or a long batch of records, so that one slow poll does not flap readiness.
     */
    static final Duration STALL_AFTER = POLL.multipliedBy(3).plus(Duration.ofSeconds(10));
    /** The first wait before a restart after a failure; doubled on each failure in a row. */
    static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
    /** The longest wait before a restart. */
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
    /** How long closing a consumer, or waiting for the thread to end at a stop, may take. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);

    /** What one reader does with its topic: where it starts, what a record means, what follows each poll. */
    public interface Records {

        /**
         * Makes a consumer, assigns it the partitions to read, and places it on each: at {@code resumeAt}'s offset
         * (the one after the last record read there) when the topic still holds it, else where a reader that starts
         * begins. {@code resumeAt} is empty at the start.
         */
        Consumer<byte[], byte[]> open(Map<TopicPartition, Long> resumeAt);

        /** Handles one record, in the order of its partition. */
        void accept(ConsumerRecord<byte[], byte[]> record);

        /** After each round of the reader, its records handled (or, with nothing assigned, a poll's time waited). */
        default void polled(Consumer<byte[], byte[]> consumer) {}

        /**
         * Records whose three steps are given as functions, such as the reader owner's own methods: {@link #open},
         * {@link #accept} and {@link #polled}.
         */
        static Records of(
                Function<Map<TopicPartition, Long>, Consumer<byte[], byte[]>> open,
                java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> accept,
                java.util.function.Consumer<Consumer<byte[], byte[]>> polled) {
            return new Records() {
                @Override
                public Consumer<byte[], byte[]> open(Map<TopicPartition, Long> resumeAt) {
                    return open.apply(resumeAt);
                }

                @Override
                public void accept(ConsumerRecord<byte[], byte[]> record) {
                    accept.accept(record);
                }

                @Override
                public void polled(Consumer<byte[], byte[]> consumer) {
                    polled.accept(consumer);
                }
            };
        }
    }

    private final String name;
    private final String who;
    private final String what;
    private final String late;
    private final Records records;
    private final Counter restarts;
    private final SkippedRecords skipped;
    private final LongSupplier nanos;
    private final Duration firstBackoff;
    private final WorkerThreads threads;
    private final CountDownLatch stopping = new CountDownLatch(1);
    /** The offset after the last record read, by partition: where a new consumer resumes. Reader thread only. */
    private final Map<TopicPartition, Long> positions = new HashMap<>();

    /** The consumer; replaced by the reader thread on a restart, woken by {@link #stop()}. */
    private volatile Consumer<byte[], byte[]> consumer;
    /** When (by {@link #nanos}) the reader last completed a poll, or started. */
    private volatile long lastPoll;
    /** True from a failure until the new consumer completes a poll. */
    private volatile boolean restarting;

    private volatile boolean running;
    private volatile Thread thread;

    /**
     * A reader on a thread named {@code name}, whose log lines begin with {@code who}, of {@code what} (a topic or a
     * partition, for log lines and {@link #stall()}), that says in its log line of a failure what it means that the
     * reader restarts ({@code late}); it counts its restarts in {@code restarts} and the records its handler failed
     * on in {@code skipped}, measures its stalls on {@code nanos} and waits {@code firstBackoff} before a first restart;
     * its thread is {@code threads}'.
     */
    TopicReader(
            String name,
            String who,
            String what,
            String late,
            Records records,
            Counter restarts,
            SkippedRecords skipped,
            LongSupplier nanos,
            Duration firstBackoff,
            WorkerThreads threads) {
        this.name = name;
        this.who = who;
        this.what = what;
        this.late = late;
        this.records = records;
        this.restarts = restarts;
        this.skipped = skipped;
        this.nanos = nanos;
        this.firstBackoff = firstBackoff;
        this.threads = threads;
    }

    /**
     * A reader of topics other than the side topics (the console's reader of the result and status topics) on a thread
     * named {@code name}, its log lines beginning with {@code who}: its restarts counted in {@code
     * image_worker_<label>_reader_restarts_total}, the records its handler fails on skipped and counted as the side
     * topics' are ({@code image_worker_side_topic_records_skipped_total{topic=<label>,reason="failed"}}).
     */
    public static TopicReader of(
            String name,
            String who,
            String what,
            String late,
            Records records,
            MeterRegistry registry,
            String label,
            WorkerThreads threads) {
        return new TopicReader(
                name,
                who,
                what,
                late,
                records,
                WorkerMetrics.counter(
                        registry,
                        "image_worker_" + label + "_reader_restarts",
                        "Restarts of the " + label + " reader after a failure (it resumes where it stopped)"),
                new SkippedRecords(
                        registry,
                        label,
                        new SkippedRecords.Reason[] {SkippedRecords.Reason.FAILED},
                        who,
                        System::nanoTime),
                System::nanoTime,
                FIRST_BACKOFF,
                threads);
    }

    /** Starts the thread; its consumer is made there. It reads until {@link #stop()}, by its owner or at shutdown. */
    public synchronized void start() {
        if (running) {
            return;
        }
        lastPoll = nanos.getAsLong();
        running = true;
        thread = threads.startReader(name, this::read, this::stop);
    }

    /** Whether the thread is alive: it outlives failures and ends with {@link #stop()}. */
    boolean reading() {
        Thread reader = thread;
        return reader != null && reader.isAlive();
    }

    private void read() {
        Duration backoff = firstBackoff;
        while (running) {
            try {
                if (consumer == null) {
                    consumer = records.open(Map.copyOf(positions));
                }
                if (consumer.assignment().isEmpty()) {
                    // No partition (yet): a consumer with nothing assigned cannot poll. Waits a poll's time.
                    if (stopsWithin(POLL)) {
                        break;
                    }
                } else {
                    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                        handle(record);
                        positions.put(new TopicPartition(record.topic(), record.partition()), record.offset() + 1);
                    }
                }
                records.polled(consumer);
                lastPoll = nanos.getAsLong();
                restarting = false;
                backoff = firstBackoff;
            } catch (WakeupException e) {
                // stop() woke the reader: the loop ends.
            } catch (RuntimeException e) {
                restarting = true;
                restarts.increment();
                Log.errorf(
                        e,
                        "%s: reading %s failed; a new reader resumes %s in %d ms (%s)",
                        who,
                        what,
                        positions.isEmpty() ? "where a reader starts" : "after the last records read " + positions,
                        backoff.toMillis(),
                        late);
                closeConsumer();
                if (stopsWithin(backoff)) {
                    break;
                }
                backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
            }
        }
        closeConsumer();
    }

    /** Hands {@code record} to its handler; a failure of the handler skips the record instead of ending the read. */
    private void handle(ConsumerRecord<byte[], byte[]> record) {
        try {
            records.accept(record);
        } catch (RuntimeException e) {
            skipped.skip(record, SkippedRecords.Reason.FAILED, e.toString());
        }
    }

    /**
     * Why the reader does not read now, if so: it restarts after a failure, or has completed no poll for longer than
     * {@link #STALL_AFTER}.
     */
    Optional<String> stall() {
        if (!running) {
            return Optional.empty();
        }
        if (restarting) {
            return Optional.of(String.format(
                    "the reader of %s failed and is restarting (failures so far: %d; see the log)",
                    what, (long) restarts.count()));
        }
        long quietMillis = Duration.ofNanos(nanos.getAsLong() - lastPoll).toMillis();
        if (quietMillis > STALL_AFTER.toMillis()) {
            return Optional.of(String.format(
                    "the reader of %s has completed no poll for %d ms (more than %d ms)",
                    what, quietMillis, STALL_AFTER.toMillis()));
        }
        return Optional.empty();
    }

    private void closeConsumer() {
        Consumer<byte[], byte[]> closing = consumer;
        consumer = null;
        if (closing == null) {
            return;
        }
        try {
            closing.close(CLOSE_TIMEOUT);
        } catch (RuntimeException e) {
            Log.warnf("%s: closing the reader of %s failed: %s", who, what, e.toString());
        }
    }

    /** Waits {@code wait}, or less when the reader stops: {@code true} when it stops. */
    private boolean stopsWithin(Duration wait) {
        try {
            return stopping.await(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    /** Ends the reading: wakes the consumer from its poll, or the thread from its back-off, and waits for its end. */
    public synchronized void stop() {
        if (!running) {
            return;
        }
        running = false;
        stopping.countDown();
        Consumer<byte[], byte[]> reading = consumer;
        if (reading != null) {
            reading.wakeup();
        }
        try {
            thread.join(CLOSE_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
