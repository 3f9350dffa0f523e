package io.imageworker.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.WorkerConfig;
import io.imageworker.support.KafkaClientConfig;
import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.Consumer;
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
 * <p>The reader thread outlives failures: it makes a new consumer that resumes after the last record read
 * ({@code image_worker_budget_reader_restarts_total}), and {@link #stall()} tells readiness while it is restarting or has
 * not completed a poll for {@link #STALL_AFTER}, because claims cannot be decided then.
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
    /** How long one poll of the reader waits for records. */
    static final Duration POLL = Duration.ofMillis(500);
    /**
     * How long the reader may go without completing a poll before readiness reports the budget stalled: three polls,
     * plus room for a collector pause or a long batch of records, so that one slow poll does not flap readiness.
     */
    static final Duration STALL_AFTER = POLL.multipliedBy(3).plus(Duration.ofSeconds(10));
    /** The reader's first wait before it restarts after a failure; doubled on each failure in a row. */
    private static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
    /** The reader's longest wait before a restart. */
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    private final String topic;
    private final long windowMillis;
    private final Map<String, Object> kafka;
    private final ObjectMapper json;
    private final String replica;
    private final Map<String, CompletableFuture<Boolean>> pending = new ConcurrentHashMap<>();
    private final TopicPartition partition;
    private final Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers;
    private final LongSupplier nanos;
    private final Duration firstBackoff;
    private final Counter restarts;
    private final CountDownLatch stopping = new CountDownLatch(1);
    /** Replaced only when the reader must read the window again from its start (see {@link #open}). */
    private volatile BudgetLedger ledger = new BudgetLedger();

    private KafkaProducer<byte[], byte[]> producer;
    /** The reader's consumer; replaced by the reader thread on a restart, woken by {@link #stop()}. */
    private volatile Consumer<byte[], byte[]> consumer;
    /** The offset after the last record the reader has read (applied or skipped); -1 before the first. */
    private volatile long next = -1;
    /** When (by {@link #nanos}) the reader last completed a poll, or started. */
    private volatile long lastPoll;
    /** True from a failure of the reader until its new consumer completes a poll. */
    private volatile boolean restarting;

    private volatile Thread reader;
    private volatile boolean running;

    @Inject
    KafkaBudgetLog(
            WorkerConfig config,
            @Identifier("default-kafka-broker") Map<String, Object> kafka,
            ObjectMapper json,
            MeterRegistry registry) {
        this(
                config,
                kafka,
                json,
                registry,
                settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer()),
                System::nanoTime,
                FIRST_BACKOFF);
    }

    /**
     * A log whose consumers come from {@code consumers} (given the reader's client settings) and whose reader measures
     * its stalls on {@code nanos} and waits {@code firstBackoff} before its first restart, for tests.
     */
    KafkaBudgetLog(
            WorkerConfig config,
            Map<String, Object> kafka,
            ObjectMapper json,
            MeterRegistry registry,
            Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers,
            LongSupplier nanos,
            Duration firstBackoff) {
        this.topic = config.topic().budget();
        this.windowMillis = config.budget().window().toMillis();
        this.kafka = kafka;
        this.json = json;
        this.replica = System.getenv().getOrDefault("HOSTNAME", "worker-" + UUID.randomUUID());
        this.partition = new TopicPartition(topic, 0);
        this.consumers = consumers;
        this.nanos = nanos;
        this.firstBackoff = firstBackoff;
        this.restarts = WorkerMetrics.counter(
                registry,
                "image_worker_budget_reader_restarts",
                "Restarts of the spend guard's budget-log reader after a failure (it resumes where it stopped)");
    }

    /** Creates the topic if it is missing, reads the current window's claims from the log, and keeps reading. */
    synchronized void start() {
        if (running) {
            return;
        }
        createTopicIfMissing();
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
        startReading();
        Log.infof(
                "Spend guard: sharing its budget through %s (replica %s), windows of %s",
                partition, replica, Duration.ofMillis(windowMillis));
    }

    /** Places the reader at the current window's start and starts its thread (without a producer: for tests). */
    synchronized void startReading() {
        open(-1);
        lastPoll = nanos.getAsLong();
        running = true;
        reader = new Thread(this::read, "image-worker-budget-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** Whether the reader thread is alive (for tests: it must outlive failures and end with {@link #stop()}). */
    boolean reading() {
        Thread thread = reader;
        return thread != null && thread.isAlive();
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

    /**
     * Reads the log for as long as the log runs. A failure (a record the client cannot read, an error of the broker or
     * of the client) does not end it: the consumer is closed and, after a back-off that grows while failures follow
     * each other, a new one resumes at the record after the last one read, so that no claim is judged twice (the
     * ledger's verdicts depend on the order of the entries; a claim applied again could take a place it never had).
     */
    private void read() {
        Duration backoff = firstBackoff;
        while (running) {
            try {
                if (consumer == null) {
                    open(next);
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    apply(record);
                    next = record.offset() + 1;
                }
                ledger.forgetBefore(System.currentTimeMillis() / windowMillis - 1);
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
                        "Spend guard: reading %s failed; a new reader resumes at %s in %d ms (readiness is down until"
                                + " it reads again)",
                        partition,
                        next < 0 ? "the window's start" : "offset " + next,
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
     * Makes the reader's consumer and places it at {@code resumeAt} when the log still holds that offset; otherwise
     * (at start-up, or when the records after the last one read are gone: deleted by retention, or the topic made
     * again) at the current window's start less {@link #CLOCK_MARGIN}, with a new ledger, as a replica that starts
     * does: the window's claims are judged again from the first, in the log's order, and reach the same verdicts.
     */
    private void open(long resumeAt) {
        consumer = consumers.apply(clientConfig(
                ConsumerConfig.configNames(),
                Map.of(
                        ConsumerConfig.CLIENT_ID_CONFIG,
                        "image-worker-budget-reader",
                        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                        false)));
        consumer.assign(List.of(partition));
        if (resumeAt >= 0) {
            long first = consumer.beginningOffsets(List.of(partition)).get(partition);
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            if (first <= resumeAt && resumeAt <= end) {
                consumer.seek(partition, resumeAt);
                return;
            }
            Log.warnf(
                    "Spend guard: offset %d is no longer in %s (it holds %d to %d); reading the window again from its"
                            + " start",
                    resumeAt, partition, first, end);
        }
        ledger = new BudgetLedger();
        long from = System.currentTimeMillis() / windowMillis * windowMillis - CLOCK_MARGIN.toMillis();
        OffsetAndTimestamp start =
                consumer.offsetsForTimes(Map.of(partition, from)).get(partition);
        if (start == null) {
            consumer.seekToEnd(List.of(partition));
        } else {
            consumer.seek(partition, start.offset());
        }
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
            Log.warnf("Spend guard: closing the reader of %s failed: %s", partition, e.toString());
        }
    }

    /** Waits {@code backoff}, or less when the log stops: {@code true} when it stops. */
    private boolean stopsWithin(Duration backoff) {
        try {
            return stopping.await(backoff.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    /**
     * Why no claim can be decided now, if so: the reader is restarting after a failure, or has completed no poll for
     * longer than {@link #STALL_AFTER} (claims then wait for their {@link #CLAIM_TIMEOUT} and are tried again).
     */
    @Override
    public Optional<String> stall() {
        if (!running) {
            return Optional.empty();
        }
        if (restarting) {
            return Optional.of(String.format(
                    "the reader of %s failed and is restarting (failures so far: %d; see the log)",
                    partition, (long) restarts.count()));
        }
        long quietMillis = Duration.ofNanos(nanos.getAsLong() - lastPoll).toMillis();
        if (quietMillis > STALL_AFTER.toMillis()) {
            return Optional.of(String.format(
                    "the reader of %s has completed no poll for %d ms (more than %d ms)",
                    partition, quietMillis, STALL_AFTER.toMillis()));
        }
        return Optional.empty();
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
        return KafkaClientConfig.of(kafka, known, own);
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
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
        try {
            reader.join(Duration.ofSeconds(5).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A log entry as written: the ledger's entry and the replica that wrote it (for people reading the topic). */
    record Record(BudgetLedger.Kind kind, String claim, long window, int limit, String replica) {}
}
