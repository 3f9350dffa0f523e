package io.imageworker.messaging.results;

import io.imageworker.config.KafkaClientConfig;
import io.imageworker.config.WorkerConfig;
import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.messaging.offsets.TransactionalOffsets;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.CpuWork;
import io.imageworker.support.DaemonThreads;
import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Exactly one visible terminal event per request: the results of finished requests (their terminal events, or their
 * DLQ copies) are published together with the offsets they complete, finished-above metadata included ({@link
 * PartitionWork#commitsIf}), in one Kafka transaction, a batch at a time: every {@code transactions.linger} or {@code
 * transactions.max-batch} results. A consumer reading the result topics with {@code isolation.level=read_committed}
 * sees a result only with its request's commit, so a worker killed at any moment leaves either both (the next owner
 * starts after the request) or neither (the next owner does it again; the result ledger answers it without a gateway
 * call, and publishes it in its own transaction). The offsets go with the consumer's group metadata ({@code
 * sendOffsetsToTransaction(offsets, groupMetadata)}): a zombie whose partitions were given to another member since is
 * fenced by the group's generation, and its transaction fails.
 *
 * <p>Each request topic (each lane) has its own producer, transaction and thread, since a transaction commits the
 * offsets of one consumer; its {@code transactional.id} is unique to the process, so a transaction left open by a
 * killed worker is aborted by the broker after {@code transactions.timeout}. Offsets are committed by transactions
 * only: the commit strategy's own periodic commits are dropped ({@code offsets.FinishedAboveCommits}), and a
 * rebalance's last commit is a transaction too ({@link #commitReleased}), never below one already made.
 *
 * <p>Off ({@code IMAGE_WORKER_TRANSACTIONS_ENABLED=false}) for brokers without transactions: results are then published
 * one by one and the offsets committed every second (at least once).
 */
@ApplicationScoped
public class ResultTransactions implements TransactionalOffsets {

    private static final Duration FIRST_BACKOFF = Duration.ofMillis(100);
    private static final Duration LONGEST_BACKOFF = Duration.ofSeconds(5);
    private static final Duration PROGRESS_PERIOD = Duration.ofSeconds(1);

    private final Map<String, Object> kafka;
    private final WorkerConfig config;
    private final PartitionWork work;
    private final CpuWork cpu;
    private final boolean enabled;
    private final String instance = UUID.randomUUID().toString().substring(0, 8);
    private final Map<String, Batcher> batchers = new ConcurrentHashMap<>();
    private final Map<String, ConsumerGroupMetadata> groups = new ConcurrentHashMap<>();
    private final Counter committedResults;
    private final Counter failedTries;
    private final Counter inDoubtCommitted;
    private final Counter inDoubtNot;
    private Admin admin;
    /** How a transaction's commit is made: as it is, except in tests that lose its answer. */
    volatile CommitStep commitStep = Runnable::run;

    ResultTransactions(
            @Identifier("default-kafka-broker") Map<String, Object> kafka,
            WorkerConfig config,
            PartitionWork work,
            CpuWork cpu,
            MeterRegistry registry) {
        this.kafka = kafka;
        this.config = config;
        this.work = work;
        this.cpu = cpu;
        this.enabled = config.transactions().enabled();
        this.committedResults = WorkerMetrics.counter(
                registry,
                "image_worker_transactions_committed",
                "Transactions committed with the results of finished requests and their offsets");
        this.failedTries = WorkerMetrics.counter(
                registry,
                "image_worker_transactions_failed",
                "Tries of a transaction of results that failed (tried again within the infrastructure patience)");
        this.inDoubtCommitted = inDoubt(registry, "committed");
        this.inDoubtNot = inDoubt(registry, "not_committed");
    }

    private static Counter inDoubt(MeterRegistry registry, String settled) {
        return Counter.builder("image_worker_transactions_in_doubt")
                .description("Commits of results that failed without saying whether they went through, by what the"
                        + " committed offsets said (never published again when they had)")
                .tag("settled", settled)
                .register(registry);
    }

    /** Whether results go out in transactions (the default). */
    @Override
    public boolean enabled() {
        return enabled;
    }

    @Override
    public void groupOf(String topic, ConsumerGroupMetadata metadata) {
        groups.put(topic, metadata);
        batcher(topic);
    }

    /**
     * Publishes {@code records} (the result of the request of {@code request}) in the next transaction of its topic,
     * with the offsets it completes; the {@code Uni} completes when the transaction is committed. It fails with
     * {@link AbandonedException} when the record's partition was given up before its result could be committed (the
     * new owner does it), or with the error of the last try when Kafka refused the transaction for longer than the
     * infrastructure patience.
     *
     * <p>What follows a commit (the record's acknowledgement, the intake's next turn, the next request's ledger lookup)
     * goes on on the CPU pool, not on the topic's transactions thread: run there, it held the next transaction back by
     * the start of up to {@code max-batch} requests (a profile at concurrency 500 found that thread issuing the next
     * requests' S3 lookups in 55% of its samples), and every result waiting in that batch waited for it.
     *
     * @param cut makes the same records with any DLQ copy's value cut, for a copy Kafka refuses as too large (made only
     *     then); or null
     */
    public Uni<Void> publish(
            String requestId,
            RecordContext request,
            List<ProducerRecord<byte[], byte[]>> records,
            Supplier<List<ProducerRecord<byte[], byte[]>>> cut) {
        Item item = new Item(requestId, request, records, cut);
        batcher(request.topic()).submit(item);
        return Uni.createFrom().completionStage(item.done).chain(() -> cpu.run(() -> null));
    }

    /** A rebalance's last commit: a transaction of its own, after the one in progress of the topic. */
    @Override
    public boolean commitReleased(Map<TopicPartition, OffsetAndMetadata> offsets, Duration wait) {
        Map<String, Map<TopicPartition, OffsetAndMetadata>> byTopic = new HashMap<>();
        offsets.forEach((partition, offset) -> byTopic.computeIfAbsent(partition.topic(), ignored -> new HashMap<>())
                .put(partition, offset));
        boolean all = true;
        for (Map.Entry<String, Map<TopicPartition, OffsetAndMetadata>> topic : byTopic.entrySet()) {
            CompletableFuture<Void> done = batcher(topic.getKey()).commitOffsets(topic.getValue());
            try {
                done.get(wait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (ExecutionException | TimeoutException e) {
                Log.warnf("Rebalance: could not commit %s in a transaction (%s)", topic.getValue(), e.toString());
                all = false;
            }
        }
        return all;
    }

    private Batcher batcher(String topic) {
        return batchers.computeIfAbsent(topic, Batcher::new);
    }

    @PreDestroy
    void close() {
        batchers.values().forEach(Batcher::close);
        synchronized (this) {
            if (admin != null) {
                admin.close(Duration.ofSeconds(1));
            }
        }
    }

    /** A test seam around a transaction's commit, to make it fail in doubt as a broker restarting can. */
    @FunctionalInterface
    interface CommitStep {
        void commit(Runnable commit);
    }

    /** A transaction's commit failed without saying whether it went through. */
    private static final class CommitInDoubt extends RuntimeException {
        CommitInDoubt(KafkaException cause) {
            super(cause);
        }

        @Override
        public synchronized KafkaException getCause() {
            return (KafkaException) super.getCause();
        }
    }

    /**
     * The committed offsets of {@code partitions} in {@code group}, read stable (a transaction still open on them is
     * waited for).
     */
    private Map<TopicPartition, OffsetAndMetadata> committedOffsets(String group, Set<TopicPartition> partitions) {
        try {
            Map<TopicPartition, OffsetAndMetadata> read = admin().listConsumerGroupOffsets(
                            Map.of(group, new ListConsumerGroupOffsetsSpec().topicPartitions(partitions)),
                            new ListConsumerGroupOffsetsOptions().requireStable(true))
                    .partitionsToOffsetAndMetadata(group)
                    .get(config.transactions().timeout().toMillis() * 2, TimeUnit.MILLISECONDS);
            Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
            read.forEach((partition, offset) -> {
                if (offset != null) {
                    committed.put(partition, offset);
                }
            });
            return committed;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException("interrupted while reading the committed offsets", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new KafkaException("could not read the committed offsets of " + partitions, e);
        }
    }

    private synchronized Admin admin() {
        if (admin == null) {
            admin = Admin.create(KafkaClientConfig.of(
                    kafka,
                    AdminClientConfig.configNames(),
                    Map.of(AdminClientConfig.CLIENT_ID_CONFIG, "image-worker-transactions-" + instance)));
        }
        return admin;
    }

    /** One request's result on its way. */
    private record Item(
            String requestId,
            RecordContext request,
            List<ProducerRecord<byte[], byte[]>> records,
            Supplier<List<ProducerRecord<byte[], byte[]>>> cut,
            CompletableFuture<Void> done) {

        Item(
                String requestId,
                RecordContext request,
                List<ProducerRecord<byte[], byte[]>> records,
                Supplier<List<ProducerRecord<byte[], byte[]>>> cut) {
            this(requestId, request, records, cut, new CompletableFuture<>());
        }
    }

    /** The transactions of one request topic: a producer, a queue, a thread. */
    private final class Batcher {

        private final String topic;
        private final ScheduledExecutorService thread;
        private final ConcurrentLinkedQueue<Item> queue = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean scheduled = new AtomicBoolean();
        /** The offsets transactions committed, so that a rebalance's last commit never goes below them. */
        private final Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();

        private KafkaProducer<byte[], byte[]> producer;
        /** The group metadata the last transaction was made under. */
        private ConsumerGroupMetadata lastGroup;

        Batcher(String topic) {
            this.topic = topic;
            this.thread = Executors.newSingleThreadScheduledExecutor(
                    DaemonThreads.named("image-worker-transactions-" + topic));
            thread.scheduleWithFixedDelay(
                    this::commitProgress,
                    PROGRESS_PERIOD.toMillis(),
                    PROGRESS_PERIOD.toMillis(),
                    TimeUnit.MILLISECONDS);
        }

        /**
         * Commits, in a transaction of offsets only, what advanced without a result of this worker: records the last
         * owner had finished (acknowledged as they are), the finished-above metadata of requests still running. Every
         * second, like the commit strategy's own commits when transactions are off.
         */
        private void commitProgress() {
            if (!queue.isEmpty() || groups.get(topic) == null) {
                return;
            }
            Map<TopicPartition, OffsetAndMetadata> advanced = new HashMap<>();
            work.commitsIf(topic, List.of()).forEach((partition, offset) -> {
                OffsetAndMetadata already = committed.get(partition);
                if (already == null
                        || offset.offset() > already.offset()
                        || offset.offset() == already.offset()
                                && !offset.metadata().equals(already.metadata())) {
                    advanced.put(partition, offset);
                }
            });
            if (advanced.isEmpty()) {
                return;
            }
            try {
                transaction(List.of(), advanced, false);
            } catch (RuntimeException e) {
                Log.debugf("Committing the progress of %s failed (%s); the next period tries again", topic, e);
            }
        }

        void submit(Item item) {
            queue.add(item);
            if (queue.size() >= config.transactions().maxBatch()) {
                thread.execute(this::flush);
            } else if (scheduled.compareAndSet(false, true)) {
                thread.schedule(this::flush, config.transactions().linger().toMillis(), TimeUnit.MILLISECONDS);
            }
        }

        /** Commits what waits, a batch at a time, until nothing does. */
        private void flush() {
            scheduled.set(false);
            while (!queue.isEmpty()) {
                List<Item> batch = new ArrayList<>();
                Item item;
                while (batch.size() < config.transactions().maxBatch() && (item = queue.poll()) != null) {
                    batch.add(item);
                }
                commit(batch);
            }
        }

        CompletableFuture<Void> commitOffsets(Map<TopicPartition, OffsetAndMetadata> offsets) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            try {
                thread.execute(() -> commitOffsets(offsets, done));
            } catch (RejectedExecutionException e) {
                // Closed at shutdown before the consumer's last revocation: what had results is committed already.
                done.completeExceptionally(e);
            }
            return done;
        }

        private void commitOffsets(Map<TopicPartition, OffsetAndMetadata> offsets, CompletableFuture<Void> done) {
            flush();
            Map<TopicPartition, OffsetAndMetadata> ahead = new HashMap<>();
            offsets.forEach((partition, offset) -> {
                OffsetAndMetadata already = committed.get(partition);
                ahead.put(partition, already != null && already.offset() > offset.offset() ? already : offset);
            });
            try {
                transaction(List.of(), ahead, false);
                done.complete(null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
            // The partitions are another's now; if they come back, what was committed is read again.
            offsets.keySet().forEach(committed::remove);
        }

        /** One batch: in one transaction with its offsets, tried again within the infrastructure patience. */
        private void commit(List<Item> batch) {
            long deadline =
                    System.nanoTime() + config.retry().infrastructurePatience().toNanos();
            Duration backoff = FIRST_BACKOFF;
            boolean cut = false;
            List<Item> pending = new ArrayList<>(batch);
            // The offsets of a transaction whose commit failed in a way that does not say whether it went through.
            Map<TopicPartition, OffsetAndMetadata> inDoubt = null;
            while (true) {
                dropGivenUp(pending);
                if (pending.isEmpty()) {
                    return;
                }
                try {
                    if (inDoubt != null) {
                        // Cleared only once settled: a settlement that fails is made again at the next try.
                        boolean went = settleInDoubt(inDoubt, pending);
                        inDoubt = null;
                        if (went) {
                            return;
                        }
                    }
                    Map<TopicPartition, OffsetAndMetadata> offsets = work.commitsIf(
                            topic, pending.stream().map(Item::request).toList());
                    try {
                        transaction(pending, offsets, cut);
                    } catch (CommitInDoubt e) {
                        inDoubt = offsets;
                        throw e.getCause();
                    }
                    committedResults.increment();
                    ended(pending);
                    return;
                } catch (RuntimeException e) {
                    failed(e);
                    if (ResultPublisher.isTooLarge(e)) {
                        if (pending.size() > 1 && inDoubt == null) {
                            // Kafka does not say which record it refused: each result in a transaction of its own.
                            pending.forEach(one -> commit(new ArrayList<>(List.of(one))));
                            return;
                        }
                        cut = true;
                    }
                    if (System.nanoTime() > deadline) {
                        Log.errorf(
                                "Results of %d request(s) could not be published in a transaction within the"
                                        + " infrastructure patience: %s",
                                pending.size(), e.toString());
                        pending.forEach(item -> item.done.completeExceptionally(e));
                        return;
                    }
                    Log.warnf("A transaction of %d result(s) failed (%s); trying again", pending.size(), e.toString());
                    sleep(backoff);
                    backoff = backoff.multipliedBy(2).compareTo(LONGEST_BACKOFF) > 0
                            ? LONGEST_BACKOFF
                            : backoff.multipliedBy(2);
                }
            }
        }

        private void failed(RuntimeException e) {
            failedTries.increment();
            if (e instanceof CommitFailedException && lastGroup == groups.get(topic)) {
                // Refused under the group metadata of the last rebalance (not a stale one a rebalance has replaced
                // since: that try is simply made again under the new one): this worker is no member of the group's
                // generation, and a revocation waiting for these results waits in vain.
                work.uncommittable();
            }
        }

        /**
         * A partition given up meanwhile is its new owner's (maybe this worker again, with a copy of the record of its
         * own): results of copies given up are not published.
         */
        private void dropGivenUp(List<Item> pending) {
            pending.removeIf(item -> {
                if (work.runs(item.request())) {
                    return false;
                }
                item.done.completeExceptionally(new AbandonedException(item.requestId(), null));
                return true;
            });
        }

        /**
         * Whether the transaction whose commit failed without saying so went through, for the partitions still held;
         * if it did, {@code pending} ended with it. They are published again only if it did not: the results were
         * published if and only if their offsets were committed, with them, in the same transaction.
         */
        private boolean settleInDoubt(Map<TopicPartition, OffsetAndMetadata> inDoubt, List<Item> pending) {
            Set<Integer> held = new HashSet<>();
            pending.forEach(item -> held.add(item.request().partition()));
            Map<TopicPartition, OffsetAndMetadata> stillHeld = new HashMap<>(inDoubt);
            stillHeld.keySet().removeIf(partition -> !held.contains(partition.partition()));
            boolean went = wentThrough(stillHeld);
            (went ? inDoubtCommitted : inDoubtNot).increment();
            if (went) {
                Log.infof(
                        "The transaction of %d result(s) of %s whose commit failed had gone through;"
                                + " not publishing them again",
                        pending.size(), topic);
                ended(pending);
            }
            return went;
        }

        /**
         * Ended here, before anything else reads the partition's progress: a commit of progress made after this one
         * must not find these requests still running and name fewer finished above it.
         */
        private void ended(List<Item> items) {
            items.forEach(item -> {
                work.ended(item.request(), true);
                item.done.complete(null);
            });
        }

        /**
         * Whether the transaction that committed {@code offsets} went through, its commit having failed without
         * saying: a new producer of the same {@code transactional.id} settles it first (completes a commit the
         * coordinator had prepared, aborts one it had not), then the committed offsets are read, stable, from the
         * group; they are this transaction's if and only if it was committed (this thread is the only one committing
         * the partitions it holds, and a commit of finished requests always moves a partition's offset or metadata).
         */
        private boolean wentThrough(Map<TopicPartition, OffsetAndMetadata> offsets) {
            closeProducer();
            producer();
            Map<TopicPartition, OffsetAndMetadata> now =
                    committedOffsets(groups.get(topic).groupId(), offsets.keySet());
            return offsets.entrySet().stream().allMatch(sent -> {
                OffsetAndMetadata read = now.get(sent.getKey());
                return read != null
                        && read.offset() == sent.getValue().offset()
                        && read.metadata().equals(sent.getValue().metadata());
            });
        }

        private void transaction(List<Item> items, Map<TopicPartition, OffsetAndMetadata> offsets, boolean cut) {
            ConsumerGroupMetadata group = groups.get(topic);
            lastGroup = group;
            if (group == null && !offsets.isEmpty()) {
                throw new IllegalStateException("no group metadata yet for " + topic);
            }
            KafkaProducer<byte[], byte[]> producer = producer();
            boolean committing = false;
            try {
                producer.beginTransaction();
                for (Item item : items) {
                    for (ProducerRecord<byte[], byte[]> record :
                            cut && item.cut() != null ? item.cut().get() : item.records()) {
                        producer.send(record);
                    }
                }
                if (!offsets.isEmpty()) {
                    producer.sendOffsetsToTransaction(offsets, group);
                }
                committing = true;
                commitStep.commit(() -> commitTransaction(producer));
                offsets.forEach((partition, offset) ->
                        committed.merge(partition, offset, (old, now) -> now.offset() >= old.offset() ? now : old));
            } catch (ProducerFencedException
                    | OutOfOrderSequenceException
                    | AuthorizationException
                    | UnsupportedVersionException e) {
                // The producer cannot go on: a new one (a new transactional.id epoch) takes over.
                closeProducer();
                throw committing && !items.isEmpty() ? new CommitInDoubt(e) : e;
            } catch (KafkaException e) {
                if (committing && !items.isEmpty()) {
                    // The commit may have gone through (a broker restarting answers late, or not at all): never
                    // aborted and published again on a guess.
                    closeProducer();
                    throw new CommitInDoubt(e);
                }
                try {
                    producer.abortTransaction();
                } catch (KafkaException abortFailed) {
                    closeProducer();
                }
                throw e;
            }
        }

        /**
         * Commits, and commits again after a timeout (the broker may be restarting): a commit that timed out may have
         * gone through, so it is never given up for an abort and a new try, which could publish the batch twice.
         */
        private void commitTransaction(KafkaProducer<byte[], byte[]> producer) {
            long deadline =
                    System.nanoTime() + config.retry().infrastructurePatience().toNanos();
            while (true) {
                try {
                    producer.commitTransaction();
                    return;
                } catch (org.apache.kafka.common.errors.TimeoutException e) {
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    Log.warnf("Committing a transaction of %s timed out (%s); committing again", topic, e.toString());
                }
            }
        }

        private KafkaProducer<byte[], byte[]> producer() {
            if (producer == null) {
                // The same id for every producer of this process and topic: a new one fences the last and settles its
                // transaction first (a commit that timed out is completed or aborted before anything is sent again).
                String id = "image-worker-" + topic + "-" + instance;
                KafkaProducer<byte[], byte[]> created = new KafkaProducer<>(
                        KafkaClientConfig.of(
                                kafka,
                                ProducerConfig.configNames(),
                                Map.of(
                                        ProducerConfig.CLIENT_ID_CONFIG,
                                        id,
                                        ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                                        id,
                                        ProducerConfig.TRANSACTION_TIMEOUT_CONFIG,
                                        (int) config.transactions().timeout().toMillis(),
                                        ProducerConfig.ACKS_CONFIG,
                                        "all",
                                        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                                        true,
                                        ProducerConfig.LINGER_MS_CONFIG,
                                        0)),
                        new ByteArraySerializer(),
                        new ByteArraySerializer());
                try {
                    created.initTransactions();
                } catch (KafkaException e) {
                    created.close(Duration.ZERO);
                    throw e;
                }
                producer = created;
                Log.infof("Results of %s are published in transactions (transactional.id %s)", topic, id);
            }
            return producer;
        }

        private void closeProducer() {
            if (producer != null) {
                try {
                    producer.close(Duration.ZERO);
                } catch (KafkaException e) {
                    Log.debugf("Closing the transactional producer of %s: %s", topic, e.toString());
                }
                producer = null;
            }
        }

        void close() {
            try {
                thread.submit(() -> {
                            flush();
                            closeProducer();
                        })
                        .get(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
                Log.debugf("Closing the transactions of %s: %s", topic, e.toString());
            }
            thread.shutdownNow();
        }

        private void sleep(Duration backoff) {
            try {
                Thread.sleep(backoff.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
