package io.imageworker.messaging.sidetopics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.KafkaClientConfig;
import io.imageworker.config.ProducerTopics;
import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.RequestId;
import io.imageworker.processing.Cancellations;
import io.imageworker.support.WorkerMetrics;
import io.imageworker.support.WorkerThreads;
import io.micrometer.core.instrument.Counter;
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
import java.util.ArrayList;
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
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The reader of the cancel topic ({@code IMAGE_WORKER_TOPIC_CANCEL}, contract v1.2): every worker must see every
 * cancel, not a share of them, so a {@link TopicReader} (a plain consumer on a daemon thread of its own) assigns itself
 * all the topic's partitions (no consumer group, nothing committed) and hands each cancel to {@link Cancellations}. It
 * starts at the records younger than {@code IMAGE_WORKER_CANCEL_RETENTION} ({@code offsetsForTimes}), so a worker that
 * starts knows the cancels its requests may still meet; start-up waits (at most {@link #CATCH_UP}) until it has read up
 * to the topic's end, before requests are taken. A record is {@code {"requestId": "...", "producer": "..."}} keyed by
 * the id (its {@code producer}, optional, decides whose cancels are forgotten first beyond the memory's bound: {@link
 * Cancellations}; none, or one that breaks the producer rule, is {@code default}); one without
 * a usable id in its value falls back to its key, a tombstone (compaction's delete) is skipped. One with no usable id
 * in either is skipped too, counted and logged at a bounded rate ({@link SkippedRecords}); a record's time is not
 * trusted beyond the reader's clock ({@link Cancellations#cancel}).
 *
 * <p>With producers taken from their topics ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}, issue 49) it reads each
 * producer's cancel topic instead, {@code <cancel topic>.<producer>} for each of {@code IMAGE_WORKER_PRODUCERS} (as the
 * request topics), which that producer alone may write: a cancel there names {@code <producer>/<requestId>}, its
 * producer being its topic's (its {@code producer} field is not read), so that it stops only that producer's request
 * of the id, never another's. The cancel topic itself is not read then.
 *
 * <p>Like the spend guard's reader ({@link KafkaBudgetLog}) it outlives failures: the consumer is closed and, after a
 * back-off that grows while failures follow each other, a new one resumes where the last stopped
 * ({@code image_worker_cancel_reader_restarts_total}); {@link #stall()} says when it restarts or has completed no poll
 * for {@link TopicReader#STALL_AFTER} ({@code image_worker_cancel_reader_stalled}). A stalled reader only delays
 * cancels (requests are still worked, and those already cancelled stay so), so readiness does not go down for it. New
 * partitions of the topic are taken on as they appear.
 */
@ApplicationScoped
public class CancelReader {

    /** How long start-up waits for the reader to reach the topic's end before requests are taken. */
    static final Duration CATCH_UP = Duration.ofSeconds(30);
    /** How often the reader looks for partitions added to the topic. */
    private static final Duration NEW_PARTITIONS_EVERY = Duration.ofSeconds(30);

    private final Optional<String> topic;
    /**
     * The topics read: the cancel topic, or with producers taken from their topics ({@code
     * IMAGE_WORKER_PRODUCER_IDENTITY=topic}) each producer's, {@code <cancel topic>.<producer>}.
     */
    private final List<String> topics;
    /** Whether a cancel's producer is its topic's, and it names {@code <producer>/<requestId>}. */
    private final boolean perProducer;

    private final Cancellations cancellations;
    private final Map<String, Object> kafka;
    private final ObjectMapper json;
    private final Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers;
    private final LongSupplier nanos;
    private final Counter restarts;
    private final SkippedRecords skipped;
    private final CountDownLatch caughtUp = new CountDownLatch(1);

    /** The offsets the reader must reach to have caught up at start, or null once it has. Reader thread only. */
    private Map<TopicPartition, Long> startEnds;
    /** When the reader last looked for new partitions. Reader thread only. */
    private long lastPartitionCheck;

    private final WorkerThreads threads;
    private volatile TopicReader reader;

    @Inject
    CancelReader(
            WorkerConfig config,
            TopicSettings topics,
            Cancellations cancellations,
            @Identifier("default-kafka-broker") Map<String, Object> kafka,
            ObjectMapper json,
            MeterRegistry registry,
            WorkerThreads threads) {
        this(
                topics.cancel().filter(name -> !name.isBlank()),
                config.producerIdentity() == WorkerConfig.ProducerIdentity.topic
                        ? Optional.of(config.producers().orElse(List.of()).stream()
                                .map(String::trim)
                                .filter(name -> !name.isEmpty())
                                .toList())
                        : Optional.empty(),
                cancellations,
                kafka,
                json,
                registry,
                settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer()),
                System::nanoTime,
                threads);
    }

    CancelReader(
            Optional<String> topic,
            Cancellations cancellations,
            Map<String, Object> kafka,
            ObjectMapper json,
            MeterRegistry registry,
            Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers,
            LongSupplier nanos,
            WorkerThreads threads) {
        this(topic, Optional.empty(), cancellations, kafka, json, registry, consumers, nanos, threads);
    }

    /**
     * A reader of {@code topic}, or, given {@code producers} (producers taken from their topics), of each producer's
     * {@code <topic>.<producer>}.
     */
    CancelReader(
            Optional<String> topic,
            Optional<List<String>> producers,
            Cancellations cancellations,
            Map<String, Object> kafka,
            ObjectMapper json,
            MeterRegistry registry,
            Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers,
            LongSupplier nanos,
            WorkerThreads threads) {
        this.topic = topic;
        this.perProducer = producers.isPresent();
        this.topics = topic.map(base -> producers
                        .map(names -> ProducerTopics.topics(base, names))
                        .orElse(List.of(base)))
                .orElse(List.of());
        this.cancellations = cancellations;
        this.kafka = kafka;
        this.json = json;
        this.consumers = consumers;
        this.nanos = nanos;
        this.threads = threads;
        // Exported with cancellation off too (0): every worker exports the same series, which the dashboard draws.
        this.restarts = WorkerMetrics.counter(
                registry,
                "image_worker_cancel_reader_restarts",
                "Restarts of the cancel topic's reader after a failure (it resumes where it stopped)");
        this.skipped =
                new SkippedRecords(registry, SideTopicMetrics.CANCEL, SkippedRecords.CANCEL, "Cancellation", nanos);
        WorkerMetrics.gauge(
                        "image_worker_cancel_reader_stalled",
                        this,
                        cancels -> cancels.stall().isPresent() ? 1 : 0,
                        "1 while the cancel topic's reader restarts or has not completed a poll for too long: cancels"
                                + " are late")
                .register(registry);
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
                        String.join(",", topics), CATCH_UP.toSeconds());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Starts the reader thread (without waiting for it to catch up). */
    synchronized void startReading() {
        if (reader != null || topic.isEmpty()) {
            return;
        }
        TopicReader started = new TopicReader(
                "image-worker-cancel-reader",
                "Cancellation",
                String.join(",", topics),
                "cancels are late meanwhile",
                TopicReader.Records.of(this::open, this::apply, consumer -> {
                    checkCaughtUp(consumer);
                    lookForNewPartitions(consumer);
                }),
                restarts,
                skipped,
                nanos,
                TopicReader.FIRST_BACKOFF,
                threads);
        reader = started;
        started.start();
        Log.infof(
                "Cancellation: reading %s from every partition, cancels kept %s",
                String.join(",", topics), cancellations.retention());
    }

    /** Whether the reader has read up to the end the topic had when it started. */
    boolean caughtUp() {
        return caughtUp.getCount() == 0;
    }

    /** Whether the reader thread is alive. */
    boolean reading() {
        TopicReader current = reader;
        return current != null && current.reading();
    }

    /**
     * Makes the consumer, assigns it every partition of the topic, and places it on each: where the last consumer
     * stopped when the topic still holds that offset, else at the first record younger than the retention.
     */
    private Consumer<byte[], byte[]> open(Map<TopicPartition, Long> resumeAt) {
        Consumer<byte[], byte[]> consumer = consumers.apply(KafkaClientConfig.of(
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
        List<TopicPartition> partitions = partitions(consumer);
        consumer.assign(partitions);
        place(consumer, partitions, resumeAt);
        if (startEnds == null && !caughtUp()) {
            startEnds = consumer.endOffsets(partitions);
        }
        lastPartitionCheck = nanos.getAsLong();
        return consumer;
    }

    /** The topics' partitions as the broker knows them now (none of a topic that does not exist). */
    private List<TopicPartition> partitions(Consumer<byte[], byte[]> consumer) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (String name : topics) {
            List<PartitionInfo> infos = consumer.partitionsFor(name);
            if (infos != null) {
                infos.stream()
                        .map(info -> new TopicPartition(info.topic(), info.partition()))
                        .forEach(partitions::add);
            }
        }
        return partitions;
    }

    /**
     * Places {@code consumer} on each of {@code partitions}: at its offset in {@code resumeAt} when the topic still
     * holds it, else at the first record younger than the retention (the end when there is none).
     */
    private void place(
            Consumer<byte[], byte[]> consumer, List<TopicPartition> partitions, Map<TopicPartition, Long> resumeAt) {
        if (partitions.isEmpty()) {
            return;
        }
        Map<TopicPartition, Long> first = consumer.beginningOffsets(partitions);
        Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
        Map<TopicPartition, Long> byTime = new HashMap<>();
        long from = System.currentTimeMillis() - cancellations.retention().toMillis();
        for (TopicPartition partition : partitions) {
            Long at = resumeAt.get(partition);
            if (at != null && first.get(partition) <= at && at <= end.get(partition)) {
                consumer.seek(partition, at);
            } else {
                byTime.put(partition, from);
            }
        }
        if (byTime.isEmpty()) {
            return;
        }
        // The end offsets were read before the search by time: a cancel written after the search (which found nothing
        // younger) stands at or after them, where seekToEnd, evaluated at the first poll, could step over it.
        Map<TopicPartition, OffsetAndTimestamp> starts = consumer.offsetsForTimes(byTime);
        for (TopicPartition partition : byTime.keySet()) {
            OffsetAndTimestamp start = starts.get(partition);
            consumer.seek(partition, start == null ? end.get(partition) : start.offset());
        }
    }

    /** Once every partition is read up to where it ended when the reader started: start-up may take requests. */
    private void checkCaughtUp(Consumer<byte[], byte[]> consumer) {
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
    private void lookForNewPartitions(Consumer<byte[], byte[]> consumer) {
        boolean none = consumer.assignment().isEmpty();
        if (!none && nanos.getAsLong() - lastPartitionCheck < NEW_PARTITIONS_EVERY.toNanos()) {
            return;
        }
        lastPartitionCheck = nanos.getAsLong();
        List<TopicPartition> now = partitions(consumer);
        if (now.size() == consumer.assignment().size()) {
            return;
        }
        List<TopicPartition> added =
                now.stream().filter(p -> !consumer.assignment().contains(p)).toList();
        Map<TopicPartition, Long> positions = new HashMap<>();
        for (TopicPartition partition : consumer.assignment()) {
            positions.put(partition, consumer.position(partition));
        }
        consumer.assign(now);
        positions.forEach((partition, at) -> {
            if (now.contains(partition)) {
                consumer.seek(partition, at);
            }
        });
        // A partition added since: its cancels are all new, read from its start (within the retention).
        place(consumer, added, Map.of());
        if (startEnds != null) {
            startEnds = consumer.endOffsets(now);
        }
        Log.infof("Cancellation: reading %d partitions of %s", now.size(), String.join(",", topics));
    }

    /**
     * Hands the cancel {@code record} names to {@link Cancellations} (which takes its time as now when it is later), or
     * skips it, counted and logged at a bounded rate, when it names no valid request id.
     */
    void apply(ConsumerRecord<byte[], byte[]> record) {
        if (record.value() == null) {
            return;
        }
        String requestId = null;
        String producer = ImageRequest.DEFAULT_PRODUCER;
        try {
            JsonNode value = json.readTree(record.value());
            if (value != null && value.path("requestId").isTextual()) {
                requestId = value.path("requestId").asText();
            }
            if (value != null
                    && value.path("producer").isTextual()
                    && ImageRequest.PRODUCER
                            .matcher(value.path("producer").asText())
                            .matches()) {
                producer = value.path("producer").asText();
            }
        } catch (IOException | RuntimeException e) {
            // Not JSON: the key may still name the request.
        }
        if (!RequestId.isValid(requestId) && record.key() != null) {
            requestId = new String(record.key(), StandardCharsets.UTF_8);
        }
        if (!RequestId.isValid(requestId)) {
            skipped.skip(
                    record,
                    SkippedRecords.Reason.UNREADABLE,
                    "no requestId (" + RequestId.RULE + ") in its value or key");
            return;
        }
        if (perProducer) {
            // The producer is its topic's, which only it may write: the cancel names that producer's request alone,
            // whatever its producer field says.
            producer = ProducerTopics.producerOf(record.topic(), topic.orElse(null));
            if (producer == null) {
                skipped.skip(record, SkippedRecords.Reason.UNREADABLE, "not on a producer's cancel topic");
                return;
            }
            requestId = ImageRequest.scopedId(producer, requestId);
        }
        cancellations.cancel(
                requestId, producer, record.timestamp() > 0 ? record.timestamp() : System.currentTimeMillis());
    }

    /**
     * Why cancels are late now, if so: the reader restarts after a failure, or has completed no poll for longer than
     * {@link TopicReader#STALL_AFTER}.
     */
    public Optional<String> stall() {
        TopicReader current = reader;
        return current == null ? Optional.empty() : current.stall();
    }

    @PreDestroy
    void stop() {
        TopicReader current = reader;
        if (current != null) {
            current.stop();
        }
    }
}
