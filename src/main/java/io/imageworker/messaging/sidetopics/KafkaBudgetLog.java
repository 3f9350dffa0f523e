package io.imageworker.messaging.sidetopics;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.KafkaClientConfig;
import io.imageworker.config.ProducerBudgets;
import io.imageworker.config.TopicSettings;
import io.imageworker.spend.BudgetLedger;
import io.imageworker.spend.BudgetLog;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.support.WorkerMetrics;
import io.imageworker.support.WorkerThreads;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The spend guard's log on Kafka ({@link BudgetLog}): partition 0 of the budget topic ({@code
 * IMAGE_WORKER_TOPIC_BUDGET}), written with {@code acks=all} by every replica that shares the budget and read by each
 * from the start of the current window, so that all of them judge the same claims in the same order ({@link
 * BudgetLedger}). A claim is decided when its own record is read back: no replica can take a place another has taken,
 * and a replica that restarts reads the window's claims again, those of its former life included. The topic keeps
 * records by time ({@code cleanup.policy=delete}, at least two windows): judging needs every claim of the window, which
 * compaction would drop.
 *
 * <p>The log is read by a {@link TopicReader}, which outlives failures: it makes a new consumer that resumes after the
 * last record read ({@code image_worker_budget_reader_restarts_total}), and {@link #stall()} tells readiness while it
 * is restarting or has not completed a poll for {@link TopicReader#STALL_AFTER}, because claims cannot be decided then.
 *
 * <p>Per-producer caps (contract v1.2, {@code IMAGE_WORKER_BUDGET_PER_PRODUCER}) share the topic: their records name
 * the producer as their {@code scope}, and windows of the producer's own length; a record without one is the fleet's,
 * as every record written before them, so older replicas and older records keep their meaning (an older replica would
 * count a producer's claims as the fleet's: too many, never too few). The reader starts at the earliest start of the
 * current windows of every scope.
 *
 * <p>Anyone who may write the topic writes into every replica's judgement, so the reader bounds what a record can do
 * (docs/delivery-semantics.md, Trust model). A record that cannot be applied (not JSON, an unknown kind, a field missing or of the wrong
 * type) is skipped and counted ({@link SkippedRecords}), never read again and again; the same record is skipped the same
 * way by a reader that starts later. A window is judged by the reader's own cap ({@code IMAGE_WORKER_BUDGET_MAX_CALLS},
 * a producer's in {@code IMAGE_WORKER_BUDGET_PER_PRODUCER}), never by the {@code limit} a record carries (written for
 * older replicas only); records of a scope without a cap here hold nothing. A record for a window beyond the next one
 * by the reader's clock is skipped, so no one can fill windows ahead or grow the ledger with them. A release gives a
 * place back only when it shows the claim's {@code secret}, whose SHA-256 is the claim's id and which only the claim's
 * writer knows until it releases the claim ({@link BudgetLedger}); any other release of a claim holding a place is
 * skipped and counted ({@code foreign_release}). So a writer of the topic can take free places (spend stops), never
 * give back a place whose call was made (spend beyond the cap).
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
    /** How long the admin client may take to list the topics, or to create the budget's, at start. */
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);
    /** The topic keeps its records at least this long (and at least two windows). */
    private static final Duration MIN_RETENTION = Duration.ofDays(1);

    private final String topic;
    private final long windowMillis;
    /** The window length of each producer with a cap of its own (contract v1.2). */
    private final Map<String, Long> producerWindows;
    /** The fleet's cap, by which this reader judges the fleet's windows; empty: the fleet's records hold nothing. */
    private final Optional<Integer> fleetLimit;
    /** The cap of each producer with one of its own, by which this reader judges its windows. */
    private final Map<String, Integer> producerLimits;

    private final SkippedRecords skipped;

    private final Map<String, Object> kafka;
    private final ObjectMapper json;
    private final String replica;
    private final Map<String, CompletableFuture<Boolean>> pending = new ConcurrentHashMap<>();
    private final TopicPartition partition;
    private final Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers;
    private final TopicReader reader;
    /** Replaced only when the reader must read the window again from its start (see {@link #open}). */
    private volatile BudgetLedger ledger = new BudgetLedger();
    /** Writes this replica's claims and releases to the log. */
    private final BudgetWriter writer;

    @Inject
    KafkaBudgetLog(
            TopicSettings topics,
            BudgetSettings budget,
            @Identifier("default-kafka-broker") Map<String, Object> kafka,
            ObjectMapper json,
            MeterRegistry registry,
            WorkerThreads threads) {
        this(
                topics,
                budget,
                kafka,
                json,
                registry,
                settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer()),
                System::nanoTime,
                TopicReader.FIRST_BACKOFF,
                threads);
    }

    /**
     * A log whose consumers come from {@code consumers} (given the reader's client settings) and whose reader measures
     * its stalls on {@code nanos} and waits {@code firstBackoff} before its first restart, on a thread of {@code
     * threads}, for tests.
     */
    KafkaBudgetLog(
            TopicSettings topics,
            BudgetSettings budget,
            Map<String, Object> kafka,
            ObjectMapper json,
            MeterRegistry registry,
            Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers,
            LongSupplier nanos,
            Duration firstBackoff,
            WorkerThreads threads) {
        this.topic = topics.budget();
        this.windowMillis = budget.window().toMillis();
        Map<String, Long> windows = new java.util.HashMap<>();
        Map<String, Integer> limits = new java.util.HashMap<>();
        ProducerBudgets.orNone(budget.perProducer()).named().forEach((name, cap) -> {
            windows.put(name, cap.window().toMillis());
            limits.put(name, cap.calls());
        });
        this.producerWindows = Map.copyOf(windows);
        this.producerLimits = Map.copyOf(limits);
        this.fleetLimit = budget.maxCalls();
        this.kafka = kafka;
        this.json = json;
        // The host name for people reading the topic, and a part drawn at start so that two lives of one pod differ:
        // it finds this replica's claims when they are read back, and proves nothing (a claim's secret does).
        this.replica = System.getenv().getOrDefault("HOSTNAME", "worker") + "-"
                + UUID.randomUUID().toString().substring(0, 8);
        this.partition = new TopicPartition(topic, 0);
        this.writer = new BudgetWriter(topic, replica, json, this::windowMillis);
        this.skipped =
                new SkippedRecords(registry, SideTopicMetrics.BUDGET, SkippedRecords.BUDGET, "Spend guard", nanos);
        this.consumers = consumers;
        this.reader = new TopicReader(
                "image-worker-budget-reader",
                "Spend guard",
                partition.toString(),
                "readiness is down until it reads again",
                TopicReader.Records.of(this::open, this::apply, consumer -> {
                    long now = System.currentTimeMillis();
                    ledger.forgetBefore(scope -> now / windowMillis(scope) - 1);
                }),
                WorkerMetrics.counter(registry, READER_RESTARTS, READER_RESTARTS_HELP),
                skipped,
                nanos,
                firstBackoff,
                threads);
    }

    /** Creates the topic if it is missing, reads the current window's claims from the log, and keeps reading. */
    @Override
    public synchronized void start() {
        if (reader.reading()) {
            return;
        }
        createTopicIfMissing();
        writer.open(clientConfig(
                ProducerConfig.configNames(),
                Map.of(
                        ProducerConfig.CLIENT_ID_CONFIG,
                        "image-worker-budget-writer",
                        ProducerConfig.ACKS_CONFIG,
                        "all",
                        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                        true)));
        startReading();
        Log.infof(
                "Spend guard: sharing its budget through %s (replica %s), windows of %s",
                partition, replica, Duration.ofMillis(windowMillis));
    }

    /** Starts the reader, which begins at the current window's start (without a producer: for tests). */
    void startReading() {
        reader.start();
    }

    /** Whether the reader thread is alive (for tests: it must outlive failures and end with {@link #stop()}). */
    boolean reading() {
        return reader.reading();
    }

    /** The window length of {@code scope}: the fleet's, or a capped producer's (the fleet's for one not known here). */
    private long windowMillis(String scope) {
        return scope == null ? windowMillis : producerWindows.getOrDefault(scope, windowMillis);
    }

    /** The cap of {@code scope} here, by which its windows are judged: none for a scope without a cap here. */
    private Optional<Integer> limit(String scope) {
        return scope == null ? fleetLimit : Optional.ofNullable(producerLimits.get(scope));
    }

    /** The longest window of any scope: how far back the reader starts, and what the topic must keep. */
    private long longestWindowMillis() {
        return producerWindows.values().stream().mapToLong(Long::longValue).reduce(windowMillis, Math::max);
    }

    @Override
    public Uni<Boolean> claim(String scope, String claim, long window, int limit) {
        CompletableFuture<Boolean> verdict = new CompletableFuture<>();
        pending.put(claim, verdict);
        writer.write(new BudgetLedger.Entry(BudgetLedger.Kind.CLAIM, scope, claim, window, limit), verdict);
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
    public void release(String scope, String secret, long window) {
        writer.write(BudgetLedger.Entry.release(scope, secret, window), null);
    }

    @Override
    public int used(String scope, long window) {
        return ledger.used(scope, window);
    }

    /**
     * Makes the reader's consumer and places it after the last record read when the log still holds that offset;
     * otherwise (at start-up, or when the records after the last one read are gone: deleted by retention, or the topic
     * made again) at the current window's start less {@link #CLOCK_MARGIN}, with a new ledger, as a replica that starts
     * does: the window's claims are judged again from the first, in the log's order, and reach the same verdicts. So no
     * claim is judged twice (the ledger's verdicts depend on the order of the entries; a claim applied again could take
     * a place it never had).
     */
    private Consumer<byte[], byte[]> open(Map<TopicPartition, Long> resumeAt) {
        Consumer<byte[], byte[]> consumer = consumers.apply(clientConfig(
                ConsumerConfig.configNames(),
                Map.of(
                        ConsumerConfig.CLIENT_ID_CONFIG,
                        "image-worker-budget-reader",
                        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                        false)));
        consumer.assign(List.of(partition));
        Long next = resumeAt.get(partition);
        if (next != null) {
            long first = consumer.beginningOffsets(List.of(partition)).get(partition);
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            if (first <= next && next <= end) {
                consumer.seek(partition, next);
                return consumer;
            }
            Log.warnf(
                    "Spend guard: offset %d is no longer in %s (it holds %d to %d); reading the window again from its"
                            + " start",
                    next, partition, first, end);
        }
        ledger = new BudgetLedger();
        long now = System.currentTimeMillis();
        long earliest = now / windowMillis * windowMillis;
        for (long length : producerWindows.values()) {
            earliest = Math.min(earliest, now / length * length);
        }
        long from = Math.max(0, earliest - CLOCK_MARGIN.toMillis());
        // The end offset is read before the search by time: a claim written after the search (which found nothing in
        // the window) stands at or after it, where seekToEnd, evaluated at the first poll, could step over it and
        // leave the claim undecided (the reader starts on its own thread, while the first claims may already be made).
        long end = consumer.endOffsets(List.of(partition)).get(partition);
        OffsetAndTimestamp start =
                consumer.offsetsForTimes(Map.of(partition, from)).get(partition);
        consumer.seek(partition, start == null ? end : start.offset());
        return consumer;
    }

    /**
     * Why no claim can be decided now, if so: the reader is restarting after a failure, or has completed no poll for
     * longer than {@link TopicReader#STALL_AFTER} (claims then wait for their {@link #CLAIM_TIMEOUT} and are tried
     * again).
     */
    @Override
    public Optional<String> stall() {
        return reader.stall();
    }

    /**
     * Applies one record of the log, or skips it (counted, logged at a bounded rate): never throws, so that no record
     * stops the reader.
     */
    void apply(ConsumerRecord<byte[], byte[]> record) {
        Record entry;
        try {
            entry = BudgetRecords.read(json, record.value());
        } catch (BudgetRecords.Unusable e) {
            skipped.skip(record, e.reason, e.getMessage());
            return;
        }
        CompletableFuture<Boolean> waiting = entry.kind() == BudgetLedger.Kind.CLAIM && replica.equals(entry.replica())
                ? pending.get(entry.claim())
                : null;
        Optional<Integer> limit = limit(entry.scope());
        if (limit.isEmpty()) {
            // A scope without a cap here (another replica's setting): no call of this replica waits on its windows.
            if (waiting != null) {
                waiting.complete(true);
            }
            return;
        }
        long next = System.currentTimeMillis() / windowMillis(entry.scope()) + 1;
        if (entry.window() > next) {
            skipped.skip(
                    record,
                    SkippedRecords.Reason.WINDOW_AHEAD,
                    "window " + entry.window() + " is beyond the next one, " + next);
            return;
        }
        BudgetLedger.Verdict verdict = ledger.apply(new BudgetLedger.Entry(
                entry.kind(), entry.scope(), entry.claim(), entry.window(), limit.get(), entry.secret()));
        if (verdict == BudgetLedger.Verdict.FOREIGN) {
            skipped.skip(
                    record,
                    SkippedRecords.Reason.FOREIGN_RELEASE,
                    "a release of claim " + entry.claim() + " (by replica " + entry.replica()
                            + ") without the claim's secret");
        }
        if (waiting != null) {
            waiting.complete(verdict == BudgetLedger.Verdict.ACCEPTED);
        }
    }

    /** This worker's id as the writer of its records. */
    String replica() {
        return replica;
    }

    private void createTopicIfMissing() {
        try (Admin admin = Admin.create(clientConfig(AdminClientConfig.configNames(), Map.of()))) {
            Set<String> names = admin.listTopics().names().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if (names.contains(topic)) {
                return;
            }
            long retention = Math.max(2 * longestWindowMillis(), MIN_RETENTION.toMillis());
            NewTopic budget = new NewTopic(topic, Optional.of(1), Optional.empty())
                    .configs(Map.of("cleanup.policy", "delete", "retention.ms", Long.toString(retention)));
            admin.createTopics(List.of(budget)).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
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
        reader.stop();
        writer.close();
    }

    /**
     * A log entry as written: the ledger's entry and the replica that wrote it (for people, and to find this replica's
     * claims when they are read back; older replicas let a release give back only a claim of the same {@code
     * replica}); {@code scope} the producer whose cap it counts against, absent (not written) for the fleet's; {@code
     * limit} the writer's cap, which no reader of this version judges by (older replicas do); {@code secret} a
     * release's proof, the secret whose SHA-256 is {@code claim} (absent from claims).
     */
    record Record(
            BudgetLedger.Kind kind,
            String claim,
            long window,
            int limit,
            String replica,
            @JsonInclude(JsonInclude.Include.NON_NULL) String scope,
            @JsonInclude(JsonInclude.Include.NON_NULL) String secret) {

        /** An entry without a secret. */
        Record(BudgetLedger.Kind kind, String claim, long window, int limit, String replica, String scope) {
            this(kind, claim, window, limit, replica, scope, null);
        }

        /** An entry of the fleet's scope, without a secret. */
        Record(BudgetLedger.Kind kind, String claim, long window, int limit, String replica) {
            this(kind, claim, window, limit, replica, null);
        }
    }
}
