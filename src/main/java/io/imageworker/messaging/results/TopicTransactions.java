package io.imageworker.messaging.results;

import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.WorkerThreads;
import io.quarkus.logging.Log;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The transactions of one request topic: a queue of results, a thread, a producer. Results are batched, every {@code
 * transactions.linger} or {@code transactions.max-batch} results (parked copies beside them, every {@code
 * transactions.park-linger} or {@code transactions.park-max-batch} copies), each batch committed in one transaction with the
 * offsets it completes and tried again within the infrastructure patience; a batch whose commit failed in doubt is
 * settled before it is tried again ({@link InDoubtSettlement}). Every second the offsets that advanced without a
 * result are committed in a transaction of offsets only ({@link #commitProgress}), and a rebalance's last commit is a
 * transaction after the one in progress ({@link #commitOffsets}).
 */
final class TopicTransactions {

    private static final Duration FIRST_BACKOFF = Duration.ofMillis(100);
    private static final Duration LONGEST_BACKOFF = Duration.ofSeconds(5);
    private static final Duration PROGRESS_PERIOD = Duration.ofSeconds(1);

    private final String topic;
    private final Supplier<ConsumerGroupMetadata> group;
    private final TransactionalProducer producer;
    private final InDoubtSettlement settlement;
    private final PartitionWork work;
    private final TransactionSettings config;
    /** {@code retry.infrastructure-patience}: how long a batch is tried again before it is given up. */
    private final Duration patience;

    private final TransactionMetrics metrics;
    private final WorkerThreads threads;
    /** Its thread, made and stopped by {@link WorkerThreads}: the producer's calls block. */
    private final ScheduledExecutorService thread;

    private final ConcurrentLinkedQueue<PendingResult> queue = new ConcurrentLinkedQueue<>();
    /** Whether a flush is scheduled after a result's linger, and after a park's. */
    private final AtomicBoolean resultsScheduled = new AtomicBoolean();

    private final AtomicBoolean parksScheduled = new AtomicBoolean();
    /** Results and parks in {@link #queue}. */
    private final AtomicInteger queuedResults = new AtomicInteger();

    private final AtomicInteger queuedParks = new AtomicInteger();
    private final CommittedOffsets committed = new CommittedOffsets();
    /** The group metadata the last transaction was made under. */
    private ConsumerGroupMetadata lastGroup;

    /** @param group the group metadata of the topic's consumer as the last rebalance left it, or null before one */
    TopicTransactions(
            String topic,
            Supplier<ConsumerGroupMetadata> group,
            TransactionalProducer producer,
            InDoubtSettlement settlement,
            PartitionWork work,
            TransactionSettings config,
            Duration patience,
            TransactionMetrics metrics,
            WorkerThreads threads) {
        this.topic = topic;
        this.group = group;
        this.producer = producer;
        this.settlement = settlement;
        this.work = work;
        this.config = config;
        this.patience = patience;
        this.metrics = metrics;
        this.threads = threads;
        this.thread = threads.transactionsOf(topic, () -> {
            flush();
            producer.close();
        });
        thread.scheduleWithFixedDelay(
                this::commitProgress, PROGRESS_PERIOD.toMillis(), PROGRESS_PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Commits, in a transaction of offsets only, what advanced without a result of this worker: records the last
     * owner had finished (acknowledged as they are), the finished-above metadata of requests still running. Every
     * second, like the commit strategy's own commits when transactions are off.
     */
    private void commitProgress() {
        if (!queue.isEmpty() || group.get() == null) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> advanced = committed.advanced(work.commitsIf(topic, List.of()));
        if (advanced.isEmpty()) {
            return;
        }
        try {
            transaction(List.of(), advanced, false);
        } catch (RuntimeException e) {
            Log.debugf("Committing the progress of %s failed (%s); the next period tries again", topic, e);
        }
    }

    /**
     * Queues {@code result} for the next transaction: committed at once when a batch is full, else after the linger
     * of its kind (a result's {@code transactions.linger}, a park's {@code transactions.park-linger}), whichever of the
     * queued kinds comes first. The queue's counts are kept beside it: a {@code ConcurrentLinkedQueue}'s size walks
     * it, which under a backlog's thousands of parks cost more than their transactions.
     */
    void submit(PendingResult result) {
        queue.add(result);
        TransactionSettings settings = config;
        boolean full = result.park()
                ? queuedParks.incrementAndGet() >= settings.parkMaxBatch()
                : queuedResults.incrementAndGet() >= settings.maxBatch();
        AtomicBoolean scheduled = result.park() ? parksScheduled : resultsScheduled;
        if (full) {
            thread.execute(this::flush);
        } else if (scheduled.compareAndSet(false, true)) {
            Duration linger = result.park() ? settings.parkLinger() : settings.linger();
            thread.schedule(this::flush, linger.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Commits what waits, a batch at a time (at most {@code max-batch} results and {@code park-max-batch} parks). */
    private void flush() {
        resultsScheduled.set(false);
        parksScheduled.set(false);
        TransactionSettings settings = config;
        while (!queue.isEmpty()) {
            List<PendingResult> batch = new ArrayList<>();
            int results = 0;
            int parks = 0;
            PendingResult result;
            while (results < settings.maxBatch()
                    && parks < settings.parkMaxBatch()
                    && (result = queue.poll()) != null) {
                batch.add(result);
                if (result.park()) {
                    parks++;
                } else {
                    results++;
                }
            }
            queuedResults.addAndGet(-results);
            queuedParks.addAndGet(-parks);
            commit(batch);
        }
    }

    /** A rebalance's last commit of {@code offsets}: after what waits, never below what a transaction committed. */
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
        try {
            transaction(List.of(), committed.notBelowCommitted(offsets), false);
            done.complete(null);
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
        committed.forget(offsets.keySet());
    }

    /** One batch: in one transaction with its offsets, tried again within the infrastructure patience. */
    private void commit(List<PendingResult> batch) {
        long deadline = System.nanoTime() + patience.toNanos();
        Duration backoff = FIRST_BACKOFF;
        boolean cut = false;
        List<PendingResult> pending = new ArrayList<>(batch);
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
                        topic, pending.stream().map(PendingResult::record).toList());
                try {
                    transaction(pending, offsets, cut);
                } catch (TransactionalProducer.CommitInDoubt e) {
                    inDoubt = offsets;
                    throw e.getCause();
                }
                metrics.committed();
                ended(pending);
                return;
            } catch (RuntimeException e) {
                failed(e);
                if (DeadLetterCopies.isTooLarge(e)) {
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
                    pending.forEach(result -> result.done().completeExceptionally(e));
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
        metrics.failedTry();
        if (e instanceof CommitFailedException && lastGroup == group.get()) {
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
    private void dropGivenUp(List<PendingResult> pending) {
        pending.removeIf(result -> {
            if (work.runs(result.record())) {
                return false;
            }
            result.done()
                    .completeExceptionally(AbandonedException.givenUp(
                            result.requestId(),
                            "its partition went to another worker (or came back to this one) before its result was"
                                    + " committed"));
            return true;
        });
    }

    /**
     * Whether the transaction whose commit failed without saying so went through, for the partitions still held;
     * if it did, {@code pending} ended with it. They are published again only if it did not: the results were
     * published if and only if their offsets were committed, with them, in the same transaction.
     */
    private boolean settleInDoubt(Map<TopicPartition, OffsetAndMetadata> inDoubt, List<PendingResult> pending) {
        Set<Integer> held = new HashSet<>();
        pending.forEach(result -> held.add(result.record().partition()));
        Map<TopicPartition, OffsetAndMetadata> stillHeld = new HashMap<>(inDoubt);
        stillHeld.keySet().removeIf(partition -> !held.contains(partition.partition()));
        producer.renew();
        boolean went = settlement.wentThrough(group.get().groupId(), stillHeld);
        metrics.settled(went);
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
     * Ended here, the one end of their records ({@link InFlight.Run#end}, for the transactional sink: {@link TransactionalSink}), before anything else reads the
     * partition's progress and before their results' {@code Uni}s complete: a commit of progress made after this one
     * must not find these requests still running and name fewer finished above it.
     */
    private void ended(List<PendingResult> results) {
        results.forEach(result -> {
            result.run().end(InFlight.Outcome.ACKNOWLEDGED);
            result.done().complete(null);
        });
    }

    private void transaction(List<PendingResult> results, Map<TopicPartition, OffsetAndMetadata> offsets, boolean cut) {
        ConsumerGroupMetadata group = this.group.get();
        lastGroup = group;
        if (group == null && !offsets.isEmpty()) {
            throw new IllegalStateException("no group metadata yet for " + topic);
        }
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        results.forEach(result -> records.addAll(result.records(cut)));
        producer.commit(records, offsets, group);
        committed.committed(offsets);
    }

    /**
     * Commits what waits and closes the producer, on its thread, then stops the thread (at once at shutdown: {@link
     * WorkerThreads} does the same, once).
     */
    void close() {
        threads.stop(thread);
    }

    private static void sleep(Duration backoff) {
        try {
            Thread.sleep(backoff.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
