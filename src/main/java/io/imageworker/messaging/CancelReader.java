package io.imageworker.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.RequestId;
import io.imageworker.config.WorkerConfig;
import io.imageworker.processing.Cancellations;
import io.imageworker.support.KafkaClientConfig;
import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.common.annotation.Identifier;
import jakarta.annotation.PreDestroy;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The reader of the cancel topic ({@code IMAGE_WORKER_TOPIC_CANCEL}, contract v1.2): every worker must see every
 * cancel, not a share of them, so a plain consumer on a daemon thread of its own assigns itself all the topic's
 * partitions (no consumer group, nothing committed) and hands each cancel to {@link Cancellations}. It starts at the
 * records younger than {@code IMAGE_WORKER_CANCEL_RETENTION} ({@code offsetsForTimes}), so a worker that starts knows
 * the cancels its requests may still meet; start-up waits (at most {@link #CATCH_UP}) until it has read up to the
 * topic's end, before requests are taken. A record is {@code {"requestId": "..."}} keyed by the id; one without a
 * usable id in its value falls back to its key, a tombstone (compaction's delete) is skipped.
 *
 * <p>Like the spend guard's reader ({@code gateway.KafkaBudgetLog}) it outlives failures: the consumer is closed and,
 * after a back-off that grows while failures follow each other, a new one resumes where the last stopped
 * ({@code image_worker_cancel_reader_restarts_total}); {@link #stall()} says when it restarts or has completed no poll
 * for {@link #STALL_AFTER} ({@code image_worker_cancel_reader_stalled}). A stalled reader only delays cancels (requests
 * are still worked, and those already cancelled stay so), so readiness does not go down for it. New partitions of the
 * topic are taken on as they appear.
 */
@ApplicationScoped
public class CancelReader {

    /** How long one poll waits for records. */
    static final Duration POLL = Duration.ofMillis(500);
    /** How long the reader may go without completing a poll before it counts as stalled. */
    static final Duration STALL_AFTER = POLL.multipliedBy(3).plus(Duration.ofSeconds(10));
    /** How long start-up waits for the reader to reach the topic's end before requests are taken. */
    static final Duration CATCH_UP = Duration.ofSeconds(30);
    /** How often the reader looks for partitions added to the topic. */
    private static final Duration NEW_PARTITIONS_EVERY = Duration.ofSeconds(30);

    private static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    private final Optional<String> topic;
    private final Cancellations cancellations;
    private final Map<String, Object> kafka;
    private final ObjectMapper json;
    private final MeterRegistry registry;
    private final Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers;
    private final LongSupplier nanos;
    private final CountDownLatch stopping = new CountDownLatch(1);
    private final CountDownLatch caughtUp = new CountDownLatch(1);
    /** The next offset to read, by partition: where a new consumer resumes. Only the reader thread writes it. */
    private final Map<TopicPartition, Long> positions = new HashMap<>();

    private Counter restarts;
    /** The offsets the reader must reach to have caught up at start, or null once it has. */
    private Map<TopicPartition, Long> startEnds;

    private volatile Consumer<byte[], byte[]> consumer;
    private volatile long lastPoll;
    private volatile boolean restarting;
    private volatile boolean running;
    private volatile Thread reader;
    private long lastPartitionCheck;

    @Inject
    CancelReader(
            WorkerConfig config,
            Cancellations cancellations,
            @Identifier("default-kafka-broker") Map<String, Object> kafka,
            ObjectMapper json,
            MeterRegistry registry) {
        this(
                config.topic().cancel().filter(name -> !name.isBlank()),
                cancellations,
                kafka,
                json,
                registry,
                settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer()),
                System::nanoTime);
    }

    CancelReader(
            Optional<String> topic,
            Cancellations cancellations,
            Map<String, Object> kafka,
            ObjectMapper json,
            MeterRegistry registry,
            Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers,
            LongSupplier nanos) {
        this.topic = topic;
        this.cancellations = cancellations;
        this.kafka = kafka;
        this.json = json;
        this.registry = registry;
        this.consumers = consumers;
        this.nanos = nanos;
    }

    /**
     * With a cancel topic, starts reading it before the request consumer starts taking requests ({@code
     * RequestConsumer} starts at priority 2000), and waits until the reader has reached the topic's end.
     */
    void start(@Observes @Priority(1500) StartupEvent event) {
        if (topic.isEmpty()) {
            return;
        }
        startReading();
        try {
            if (!caughtUp.await(CATCH_UP.toMillis(), TimeUnit.MILLISECONDS)) {
                Log.warnf(
                        "Cancellation: the reader of %s has not reached the topic's end after %d s; taking requests"
                                + " anyway (cancels read later still stop requests that have made no call)",
                        topic.get(), CATCH_UP.toSeconds());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Starts the reader thread (without waiting for it to catch up). */
    synchronized void startReading() {
        if (running || topic.isEmpty()) {
            return;
        }
        restarts = WorkerMetrics.counter(
                registry,
                "image_worker_cancel_reader_restarts",
                "Restarts of the cancel topic's reader after a failure (it resumes where it stopped)");
        Gauge.builder(
                        "image_worker_cancel_reader_stalled",
                        this,
                        cancels -> cancels.stall().isPresent() ? 1 : 0)
                .description("1 while the cancel topic's reader restarts or has not completed a poll for too long:"
                        + " cancels are late")
                .strongReference(true)
                .register(registry);
        lastPoll = nanos.getAsLong();
        running = true;
        reader = new Thread(this::read, "image-worker-cancel-reader");
        reader.setDaemon(true);
        reader.start();
        Log.infof(
                "Cancellation: reading %s from every partition, cancels kept %s",
                topic.get(), cancellations.retention());
    }

    /** Whether the reader has read up to the end the topic had when it started. */
    boolean caughtUp() {
        return caughtUp.getCount() == 0;
    }

    /** Whether the reader thread is alive. */
    boolean reading() {
        Thread thread = reader;
        return thread != null && thread.isAlive();
    }

    private void read() {
        Duration backoff = FIRST_BACKOFF;
        while (running) {
            try {
                if (consumer == null) {
                    open();
                }
                if (consumer.assignment().isEmpty()) {
                    // No topic yet (a consumer with nothing assigned cannot poll): look for it again shortly.
                    if (stopsWithin(POLL)) {
                        break;
                    }
                } else {
                    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                        apply(record);
                        positions.put(new TopicPartition(record.topic(), record.partition()), record.offset() + 1);
                    }
                }
                checkCaughtUp();
                lookForNewPartitions();
                lastPoll = nanos.getAsLong();
                restarting = false;
                backoff = FIRST_BACKOFF;
            } catch (WakeupException e) {
                // stop() woke the reader: the loop ends.
            } catch (RuntimeException e) {
                restarting = true;
                restarts.increment();
                Log.errorf(
                        e,
                        "Cancellation: reading %s failed; a new reader resumes where it stopped in %d ms (cancels are"
                                + " late meanwhile)",
                        topic.get(),
                        backoff.toMillis());
                closeConsumer();
                if (stopsWithin(backoff)) {
                    break;
                }
                backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
            }
        }
        closeConsumer();
    }

    /**
     * Makes the consumer, assigns it every partition of the topic, and places it on each: where the last consumer
     * stopped when the topic still holds that offset, else at the first record younger than the retention.
     */
    private void open() {
        consumer = consumers.apply(KafkaClientConfig.of(
                kafka,
                ConsumerConfig.configNames(),
                Map.of(
                        ConsumerConfig.CLIENT_ID_CONFIG,
                        "image-worker-cancel-reader",
                        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                        false,
                        ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG,
                        false,
                        // An offset gone (retention) is read again from the first kept: cancels out of date are
                        // skipped by their time.
                        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                        "earliest")));
        List<TopicPartition> partitions = partitions();
        consumer.assign(partitions);
        place(partitions);
        if (startEnds == null && !caughtUp()) {
            startEnds = consumer.endOffsets(partitions);
        }
        lastPartitionCheck = nanos.getAsLong();
    }

    /** The topic's partitions as the broker knows them now (none while the topic does not exist). */
    private List<TopicPartition> partitions() {
        List<PartitionInfo> infos = consumer.partitionsFor(topic.get());
        if (infos == null) {
            return List.of();
        }
        return infos.stream()
                .map(info -> new TopicPartition(info.topic(), info.partition()))
                .toList();
    }

    private void place(List<TopicPartition> partitions) {
        if (partitions.isEmpty()) {
            return;
        }
        Map<TopicPartition, Long> first = consumer.beginningOffsets(partitions);
        Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
        Map<TopicPartition, Long> byTime = new HashMap<>();
        long from = System.currentTimeMillis() - cancellations.retention().toMillis();
        for (TopicPartition partition : partitions) {
            Long resumeAt = positions.get(partition);
            if (resumeAt != null && first.get(partition) <= resumeAt && resumeAt <= end.get(partition)) {
                consumer.seek(partition, resumeAt);
            } else {
                byTime.put(partition, from);
            }
        }
        if (byTime.isEmpty()) {
            return;
        }
        Map<TopicPartition, OffsetAndTimestamp> starts = consumer.offsetsForTimes(byTime);
        for (TopicPartition partition : byTime.keySet()) {
            OffsetAndTimestamp start = starts.get(partition);
            if (start == null) {
                consumer.seekToEnd(List.of(partition));
            } else {
                consumer.seek(partition, start.offset());
            }
        }
    }

    /** Once every partition is read up to where it ended when the reader started: start-up may take requests. */
    private void checkCaughtUp() {
        Map<TopicPartition, Long> ends = startEnds;
        if (ends == null) {
            return;
        }
        for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
            if (consumer.position(end.getKey()) < end.getValue()) {
                return;
            }
        }
        startEnds = null;
        caughtUp.countDown();
    }

    /** Now and then, takes on the partitions added to the topic (or the topic itself, created after the worker). */
    private void lookForNewPartitions() {
        boolean none = consumer.assignment().isEmpty();
        if (!none && nanos.getAsLong() - lastPartitionCheck < NEW_PARTITIONS_EVERY.toNanos()) {
            return;
        }
        lastPartitionCheck = nanos.getAsLong();
        List<TopicPartition> now = partitions();
        if (now.size() == consumer.assignment().size()) {
            return;
        }
        List<TopicPartition> added =
                now.stream().filter(p -> !consumer.assignment().contains(p)).toList();
        for (TopicPartition partition : consumer.assignment()) {
            positions.put(partition, consumer.position(partition));
        }
        consumer.assign(now);
        for (TopicPartition partition : now) {
            if (!added.contains(partition)) {
                consumer.seek(partition, positions.get(partition));
            }
        }
        // A partition added since: its cancels are all new, read from its start (within the retention).
        place(added);
        if (startEnds != null) {
            startEnds = consumer.endOffsets(now);
        }
        Log.infof("Cancellation: reading %d partitions of %s", now.size(), topic.get());
    }

    private void apply(ConsumerRecord<byte[], byte[]> record) {
        if (record.value() == null) {
            return;
        }
        String requestId = null;
        try {
            JsonNode value = json.readTree(record.value());
            if (value != null && value.path("requestId").isTextual()) {
                requestId = value.path("requestId").asText();
            }
        } catch (IOException | RuntimeException e) {
            // Not JSON: the key may still name the request.
        }
        if (!RequestId.isValid(requestId) && record.key() != null) {
            requestId = new String(record.key(), StandardCharsets.UTF_8);
        }
        if (!RequestId.isValid(requestId)) {
            Log.warnf(
                    "Cancellation: skipping record %d of %s-%d: no requestId (%s) in its value or key",
                    record.offset(), record.topic(), record.partition(), RequestId.RULE);
            return;
        }
        cancellations.cancel(requestId, record.timestamp() > 0 ? record.timestamp() : System.currentTimeMillis());
    }

    /**
     * Why cancels are late now, if so: the reader restarts after a failure, or has completed no poll for longer than
     * {@link #STALL_AFTER}.
     */
    public Optional<String> stall() {
        if (!running) {
            return Optional.empty();
        }
        if (restarting) {
            return Optional.of("the reader of " + topic.get() + " failed and is restarting (see the log)");
        }
        long quietMillis = Duration.ofNanos(nanos.getAsLong() - lastPoll).toMillis();
        if (quietMillis > STALL_AFTER.toMillis()) {
            return Optional.of(String.format(
                    "the reader of %s has completed no poll for %d ms (more than %d ms)",
                    topic.get(), quietMillis, STALL_AFTER.toMillis()));
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
            closing.close(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            Log.warnf("Cancellation: closing the reader of %s failed: %s", topic.get(), e.toString());
        }
    }

    private boolean stopsWithin(Duration backoff) {
        try {
            return stopping.await(backoff.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    @PreDestroy
    synchronized void stop() {
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
            reader.join(Duration.ofSeconds(5).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
