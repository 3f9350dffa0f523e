package io.imageworker.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.WorkerConfig;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The spend guard's log on Kafka: partition 0 of the budget topic ({@code IMAGE_WORKER_TOPIC_BUDGET}), written with
 * {@code acks=all} by every replica that shares the budget and read by each from the start of the current window, so
 * that all of them judge the same claims in the same order ({@link BudgetLedger}). A claim is decided when its own
 * record is read back: no replica can take a place another has taken, and a replica that restarts reads the window's
 * claims again, those of its former life included. The topic keeps records by time ({@code cleanup.policy=delete},
 * at least two windows): judging needs every claim of the window, which compaction would drop.
 *
 * <p>Started by the spend guard only when a cap is set. Clients get the worker's Kafka settings ({@code kafka.*}:
 * brokers, TLS, SASL). A missing topic is created with one partition (best effort: the chart's topic job or Strimzi
 * normally creates it).
 */
@ApplicationScoped
public class KafkaBudgetLog implements BudgetLog {

    /** How long a claim may take to be written and read back before it counts as failed (and is tried again). */
    private static final Duration CLAIM_TIMEOUT = Duration.ofSeconds(30);
    /** Claims are read from this long before the window's start: producers' clocks may run ahead of the broker's. */
    private static final Duration CLOCK_MARGIN = Duration.ofMinutes(1);

    private final String topic;
    private final long windowMillis;
    private final Map<String, Object> kafka;
    private final ObjectMapper json;
    private final String replica;
    private final BudgetLedger ledger = new BudgetLedger();
    private final Map<String, CompletableFuture<Boolean>> pending = new ConcurrentHashMap<>();
    private final TopicPartition partition;
    private KafkaProducer<byte[], byte[]> producer;
    private KafkaConsumer<byte[], byte[]> consumer;
    private Thread reader;
    private volatile boolean running;

    KafkaBudgetLog(
            WorkerConfig config, @Identifier("default-kafka-broker") Map<String, Object> kafka, ObjectMapper json) {
        this.topic = config.topic().budget();
        this.windowMillis = config.budget().window().toMillis();
        this.kafka = kafka;
        this.json = json;
        this.replica = System.getenv().getOrDefault("HOSTNAME", "worker-" + UUID.randomUUID());
        this.partition = new TopicPartition(topic, 0);
    }

    /** Creates the topic if it is missing, reads the current window's claims from the log, and keeps reading. */
    synchronized void start() {
        if (running) {
            return;
        }
        createTopicIfMissing();
        consumer = new KafkaConsumer<>(
                clientConfig(
                        ConsumerConfig.configNames(),
                        Map.of(
                                ConsumerConfig.CLIENT_ID_CONFIG,
                                "image-worker-budget-reader",
                                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                                false)),
                new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        consumer.assign(List.of(partition));
        long from = System.currentTimeMillis() / windowMillis * windowMillis - CLOCK_MARGIN.toMillis();
        OffsetAndTimestamp start =
                consumer.offsetsForTimes(Map.of(partition, from)).get(partition);
        if (start == null) {
            consumer.seekToEnd(List.of(partition));
        } else {
            consumer.seek(partition, start.offset());
        }
        producer = new KafkaProducer<>(
                clientConfig(
                        ProducerConfig.configNames(),
                        Map.of(
                                ProducerConfig.CLIENT_ID_CONFIG,
                                "image-worker-budget-writer",
                                ProducerConfig.ACKS_CONFIG,
                                "all",
                                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                                true)),
                new ByteArraySerializer(),
                new ByteArraySerializer());
        running = true;
        reader = new Thread(this::read, "image-worker-budget-reader");
        reader.setDaemon(true);
        reader.start();
        Log.infof(
                "Spend guard: sharing its budget through %s (replica %s), windows of %s",
                partition, replica, Duration.ofMillis(windowMillis));
    }

    @Override
    public Uni<Boolean> claim(String claim, long window, int limit) {
        CompletableFuture<Boolean> verdict = new CompletableFuture<>();
        pending.put(claim, verdict);
        write(new BudgetLedger.Entry(BudgetLedger.Kind.CLAIM, claim, window, limit), verdict);
        return Uni.createFrom()
                .completionStage(verdict)
                .ifNoItem()
                .after(CLAIM_TIMEOUT)
                .fail()
                .onTermination()
                .invoke(() -> pending.remove(claim))
                // The request goes on elsewhere: the reader thread only reads the log.
                .emitOn(Infrastructure.getDefaultExecutor());
    }

    @Override
    public void release(String claim, long window) {
        write(new BudgetLedger.Entry(BudgetLedger.Kind.RELEASE, claim, window, 0), null);
    }

    @Override
    public int used(long window) {
        return ledger.used(window);
    }

    private void write(BudgetLedger.Entry entry, CompletableFuture<Boolean> verdict) {
        byte[] value;
        try {
            value = json.writeValueAsBytes(
                    new Record(entry.kind(), entry.claim(), entry.window(), entry.limit(), replica));
        } catch (IOException e) {
            throw new IllegalStateException("cannot write a budget entry", e);
        }
        // The record's time is the claim's: reading from a window's start by time finds every claim of the window.
        long at = Math.max(System.currentTimeMillis(), entry.window() * windowMillis);
        producer.send(
                new ProducerRecord<>(topic, 0, at, replica.getBytes(StandardCharsets.UTF_8), value),
                (metadata, error) -> {
                    if (error != null) {
                        Log.warnf("Spend guard: could not write a %s to %s: %s", entry.kind(), topic, error.toString());
                        if (verdict != null) {
                            verdict.completeExceptionally(error);
                        }
                    }
                });
    }

    private void read() {
        try {
            while (running) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    apply(record);
                }
                ledger.forgetBefore(System.currentTimeMillis() / windowMillis - 1);
            }
        } catch (WakeupException e) {
            // Closing.
        } catch (RuntimeException e) {
            Log.errorf(e, "Spend guard: reading %s failed; no claim can be decided any more", partition);
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    private void apply(ConsumerRecord<byte[], byte[]> record) {
        Record entry;
        try {
            entry = json.readValue(record.value(), Record.class);
        } catch (IOException | RuntimeException e) {
            Log.warnf("Spend guard: skipping record %d of %s, not a budget entry: %s", record.offset(), partition, e);
            return;
        }
        BudgetLedger.Verdict verdict =
                ledger.apply(new BudgetLedger.Entry(entry.kind(), entry.claim(), entry.window(), entry.limit()));
        CompletableFuture<Boolean> waiting =
                entry.kind() == BudgetLedger.Kind.CLAIM ? pending.get(entry.claim()) : null;
        if (waiting != null) {
            waiting.complete(verdict == BudgetLedger.Verdict.ACCEPTED);
        }
    }

    private void createTopicIfMissing() {
        try (Admin admin = Admin.create(clientConfig(AdminClientConfig.configNames(), Map.of()))) {
            Set<String> names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            if (names.contains(topic)) {
                return;
            }
            long retention = Math.max(2 * windowMillis, Duration.ofDays(1).toMillis());
            NewTopic budget = new NewTopic(topic, java.util.Optional.of(1), java.util.Optional.empty())
                    .configs(Map.of("cleanup.policy", "delete", "retention.ms", Long.toString(retention)));
            admin.createTopics(List.of(budget)).all().get(30, TimeUnit.SECONDS);
            Log.infof("Spend guard: created topic %s (1 partition, retention %d ms)", topic, retention);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                Log.warnf(
                        "Spend guard: could not create topic %s (%s); it must exist",
                        topic, e.getCause().toString());
            }
        } catch (TimeoutException e) {
            Log.warnf("Spend guard: could not check topic %s in time; it must exist", topic);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The worker's {@code kafka.*} settings that this kind of client knows, with {@code own} on top. */
    private Map<String, Object> clientConfig(Set<String> known, Map<String, Object> own) {
        Map<String, Object> config = new HashMap<>();
        kafka.forEach((key, value) -> {
            if (known.contains(key)) {
                config.put(key, value);
            }
        });
        config.putAll(own);
        return config;
    }

    @PreDestroy
    synchronized void stop() {
        if (!running) {
            return;
        }
        running = false;
        consumer.wakeup();
        producer.close(Duration.ofSeconds(5));
        try {
            reader.join(Duration.ofSeconds(5).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A log entry as written: the ledger's entry and the replica that wrote it (for people reading the topic). */
    record Record(BudgetLedger.Kind kind, String claim, long window, int limit, String replica) {}
}
