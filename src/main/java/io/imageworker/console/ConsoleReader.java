package io.imageworker.console;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.KafkaClientConfig;
import io.imageworker.support.DaemonThreads;
import io.quarkus.logging.Log;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The console's own reader of the result topics and of the status topic: a plain consumer on a daemon thread, no
 * consumer group (every replica's console sees the whole fleet's requests, and nothing is committed), {@code
 * isolation.level=read_committed} (results are published in transactions: a result of an aborted one is never
 * shown). It starts at the last records of each partition, as many as the feed keeps spread over the partitions, and
 * hands each event to the {@link ConsoleFeed}. A failure closes the consumer and, after a back-off (1 s doubling to 30
 * s), a new one resumes after the last records read. It runs only while the console is on. Its partitions are those
 * the topics have when it starts (or restarts after a failure): partitions added later are read after a restart.
 */
final class ConsoleReader {

    private static final Duration POLL = Duration.ofMillis(500);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    private final Map<String, ConsoleEvents.Kind> topics;
    private final Map<String, Object> kafka;
    private final ConsoleFeed feed;
    private final ObjectMapper json;
    private final CountDownLatch stopping = new CountDownLatch(1);
    /** The offset after the last record read, by partition. Reader thread only. */
    private final Map<TopicPartition, Long> positions = new HashMap<>();

    private volatile Consumer<byte[], byte[]> consumer;
    private volatile boolean running;
    private volatile Thread thread;
    private volatile long read;

    ConsoleReader(
            Map<String, ConsoleEvents.Kind> topics, Map<String, Object> kafka, ConsoleFeed feed, ObjectMapper json) {
        this.topics = topics;
        this.kafka = kafka;
        this.feed = feed;
        this.json = json;
    }

    /** The topics to read from the worker's settings: completed, failed, and the status topic when named. */
    static Map<String, ConsoleEvents.Kind> topics(String completed, String failed, Optional<String> status) {
        Map<String, ConsoleEvents.Kind> topics = new HashMap<>();
        topics.put(completed, ConsoleEvents.Kind.COMPLETED);
        topics.put(failed, ConsoleEvents.Kind.FAILED);
        status.filter(name -> !name.isBlank()).ifPresent(name -> topics.put(name, ConsoleEvents.Kind.STARTED));
        return topics;
    }

    synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        thread = DaemonThreads.named("image-worker-console-reader").newThread(this::read);
        thread.start();
        Log.infof("Console: reading %s (read_committed) for the console", topics.keySet());
    }

    /** Records read since the start. */
    long recordsRead() {
        return read;
    }

    private void read() {
        Duration backoff = Duration.ofSeconds(1);
        while (running) {
            try {
                if (consumer == null) {
                    consumer = open();
                }
                if (consumer.assignment().isEmpty()) {
                    // The topics have no partition yet (not created): look again after a while.
                    closeConsumer();
                    if (stopsWithin(Duration.ofSeconds(5))) {
                        break;
                    }
                    continue;
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    ConsoleEvents.Kind kind = topics.get(record.topic());
                    if (kind != null) {
                        ConsoleEvents.read(json, kind, record.value(), record.timestamp())
                                .ifPresent(feed::apply);
                    }
                    read++;
                    positions.put(new TopicPartition(record.topic(), record.partition()), record.offset() + 1);
                }
                backoff = Duration.ofSeconds(1);
            } catch (WakeupException e) {
                // stop(): the loop ends.
            } catch (RuntimeException e) {
                Log.warnf(
                        "Console: reading %s failed (%s); a new reader resumes in %d ms",
                        topics.keySet(), e, backoff.toMillis());
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
     * A consumer assigned every partition of the topics, each placed after its last record read, or, at the start, on
     * its last {@code maxEntries / partitions} records.
     */
    private Consumer<byte[], byte[]> open() {
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
            List<TopicPartition> partitions = new ArrayList<>();
            Map<String, Integer> perTopic = new HashMap<>();
            for (String topic : topics.keySet()) {
                List<PartitionInfo> infos = opened.partitionsFor(topic, Duration.ofSeconds(10));
                if (infos != null) {
                    infos.forEach(info -> partitions.add(new TopicPartition(topic, info.partition())));
                    perTopic.put(topic, infos.size());
                }
            }
            opened.assign(partitions);
            if (partitions.isEmpty()) {
                return opened;
            }
            Map<TopicPartition, Long> ends = opened.endOffsets(partitions);
            Map<TopicPartition, Long> begins = opened.beginningOffsets(partitions);
            for (TopicPartition partition : partitions) {
                Long resume = positions.get(partition);
                long begin = begins.getOrDefault(partition, 0L);
                long end = ends.getOrDefault(partition, 0L);
                long last = (feed.maxEntries() + perTopic.get(partition.topic()) - 1) / perTopic.get(partition.topic());
                long at = resume != null && resume >= begin ? resume : Math.max(begin, end - last);
                opened.seek(partition, at);
            }
            return opened;
        } catch (RuntimeException e) {
            opened.close(Duration.ofSeconds(5));
            throw e;
        }
    }

    private boolean stopsWithin(Duration wait) {
        try {
            return stopping.await(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    private void closeConsumer() {
        Consumer<byte[], byte[]> closing = consumer;
        consumer = null;
        if (closing != null) {
            try {
                closing.close(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                Log.debugf("Console: closing the reader failed: %s", e);
            }
        }
    }

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
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
