package io.imageworker.console;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.KafkaClientConfig;
import io.imageworker.messaging.sidetopics.TopicReader;
import io.imageworker.support.WorkerThreads;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The console's own reader of the result topics and of the status topic: a plain consumer on a daemon thread, no
 * consumer group (every replica's console sees the whole fleet's requests, and nothing is committed), {@code
 * isolation.level=read_committed} (results are published in transactions: a result of an aborted one is never
 * shown). It starts at the last records of each partition, as many as the feed keeps spread over the partitions, and
 * hands each event to the {@link ConsoleFeed}. The reading itself is the side topics' {@link TopicReader}: a failure
 * closes the consumer and, after a back-off (1 s doubling to 30 s), a new one resumes after the last records read
 * ({@code image_worker_console_reader_restarts_total}); a record the console fails on is skipped and counted
 * ({@code image_worker_side_topic_records_skipped_total{topic="console"}}), never read again and again. It runs only
 * while the console is on. Its partitions are those the topics have when it starts (or restarts after a failure):
 * partitions added later are read after a restart.
 */
final class ConsoleReader {

    private final Map<String, ConsoleEvents.Kind> topics;
    private final Map<String, Object> kafka;
    private final ConsoleFeed feed;
    private final ObjectMapper json;
    private final java.util.function.Consumer<ConsoleEntry> shown;
    private final TopicReader reader;

    private volatile long read;
    /** Reader thread only. */
    private long roundsWithoutPartitions;

    /** How many rounds without partitions before the topics are looked up again. */
    private static final int LOOK_AGAIN_EVERY = 10;

    ConsoleReader(
            Map<String, ConsoleEvents.Kind> topics,
            Map<String, Object> kafka,
            ConsoleFeed feed,
            ObjectMapper json,
            MeterRegistry registry,
            WorkerThreads threads) {
        this(topics, kafka, feed, json, registry, threads, feed::apply);
    }

    /** The same, each event read handed to {@code shown} instead of straight to the feed (a test's seam). */
    ConsoleReader(
            Map<String, ConsoleEvents.Kind> topics,
            Map<String, Object> kafka,
            ConsoleFeed feed,
            ObjectMapper json,
            MeterRegistry registry,
            WorkerThreads threads,
            java.util.function.Consumer<ConsoleEntry> shown) {
        this.topics = topics;
        this.kafka = kafka;
        this.feed = feed;
        this.json = json;
        this.shown = shown;
        this.reader = TopicReader.of(
                "image-worker-console-reader",
                "Console",
                String.join(",", topics.keySet()),
                "the console shows no new requests meanwhile",
                TopicReader.Records.of(this::open, this::accept, this::polled),
                registry,
                "console",
                threads);
    }

    /** The topics to read from the worker's settings: completed, failed, and the status topic when named. */
    static Map<String, ConsoleEvents.Kind> topics(String completed, String failed, Optional<String> status) {
        Map<String, ConsoleEvents.Kind> topics = new HashMap<>();
        topics.put(completed, ConsoleEvents.Kind.COMPLETED);
        topics.put(failed, ConsoleEvents.Kind.FAILED);
        status.filter(name -> !name.isBlank()).ifPresent(name -> topics.put(name, ConsoleEvents.Kind.STARTED));
        return topics;
    }

    void start() {
        reader.start();
        Log.infof("Console: reading %s (read_committed) for the console", topics.keySet());
    }

    /** Records read since the start. */
    long recordsRead() {
        return read;
    }

    /** Hands one record's event, if it is one the console shows, to the feed. */
    private void accept(ConsumerRecord<byte[], byte[]> record) {
        read++;
        ConsoleEvents.Kind kind = topics.get(record.topic());
        if (kind != null) {
            ConsoleEvents.read(json, kind, record.value(), record.timestamp()).ifPresent(shown);
        }
    }

    /**
     * A consumer assigned every partition of the topics, each placed after its last record read, or, at the start, on
     * its last {@code maxEntries / partitions} records ({@code positions} is empty at the start).
     */
    private Consumer<byte[], byte[]> open(Map<TopicPartition, Long> positions) {
        Map<String, Object> own = new HashMap<>();
        own.put(ConsumerConfig.CLIENT_ID_CONFIG, "image-worker-console");
        own.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        own.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        own.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        own.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        // Reading a topic never creates it (the status topic may be named before it exists).
        own.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        Map<String, Object> settings = KafkaClientConfig.of(kafka, ConsumerConfig.configNames(), own);
        settings.remove(ConsumerConfig.GROUP_ID_CONFIG);
        Consumer<byte[], byte[]> opened =
                new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        try {
            place(opened, positions);
            return opened;
        } catch (RuntimeException e) {
            opened.close(Duration.ofSeconds(5));
            throw e;
        }
    }

    /**
     * Assigns {@code consumer} every partition the topics have now, each placed after its last record read ({@code
     * positions}), or on its last {@code maxEntries / partitions} records.
     */
    private void place(Consumer<byte[], byte[]> consumer, Map<TopicPartition, Long> positions) {
        List<TopicPartition> partitions = new ArrayList<>();
        Map<String, Integer> perTopic = new HashMap<>();
        for (String topic : topics.keySet()) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(10));
            if (infos != null) {
                infos.forEach(info -> partitions.add(new TopicPartition(topic, info.partition())));
                perTopic.put(topic, infos.size());
            }
        }
        consumer.assign(partitions);
        if (partitions.isEmpty()) {
            return;
        }
        Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
        Map<TopicPartition, Long> begins = consumer.beginningOffsets(partitions);
        for (TopicPartition partition : partitions) {
            Long resume = positions.get(partition);
            long begin = begins.getOrDefault(partition, 0L);
            long end = ends.getOrDefault(partition, 0L);
            long last = (feed.maxEntries() + perTopic.get(partition.topic()) - 1) / perTopic.get(partition.topic());
            long at = resume != null && resume >= begin ? resume : Math.max(begin, end - last);
            consumer.seek(partition, at);
        }
    }

    /**
     * After each round: while the topics have no partition (not created yet: reading never creates them), looks for
     * them again every {@link #LOOK_AGAIN_EVERY} rounds (a round without partitions waits a poll's time, 0.5 s).
     */
    private void polled(Consumer<byte[], byte[]> consumer) {
        if (consumer.assignment().isEmpty() && ++roundsWithoutPartitions % LOOK_AGAIN_EVERY == 0) {
            place(consumer, Map.of());
        }
    }

    void stop() {
        reader.stop();
    }
}
