package io.imageworker.messaging.results;

import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.CpuWork;
import io.imageworker.support.RetrySettings;
import io.imageworker.support.WorkerThreads;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

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
 * <p>Each request topic (each lane) has its own producer, transaction and thread (made and stopped by {@code
 * support.WorkerThreads}), since a transaction commits the offsets of one consumer; its {@code transactional.id} is unique to the process, so a transaction left open by a
 * killed worker is aborted by the broker after {@code transactions.timeout}. Offsets are committed by transactions
 * only: the commit strategy's own periodic commits are dropped ({@code offsets.FinishedAboveCommits}), and a
 * rebalance's last commit is a transaction too ({@link #commitReleased}), never below one already made. The
 * default result sink ({@link TransactionalSink}) sends through it.
 *
 * <p>Its parts, each with one job: the batches of each request topic, their retries and periodic commits of offsets
 * only ({@link TopicTransactions}), the transactional producer's lifecycle ({@link TransactionalProducer}), the
 * settlement of a commit in doubt ({@link InDoubtSettlement}), the offsets committed so far ({@link
 * CommittedOffsets}) and the counters ({@link TransactionMetrics}).
 *
 * <p>Off ({@code IMAGE_WORKER_TRANSACTIONS_ENABLED=false}) for brokers without transactions: the result sink is then
 * {@link AcknowledgedSink}, results are published one by one and the offsets committed every second (at least once),
 * and this is never made.
 */
@ApplicationScoped
public class ResultTransactions {

    private final Map<String, Object> kafka;
    private final TransactionSettings config;
    private final RetrySettings retry;
    private final PartitionWork work;
    private final CpuWork cpu;
    private final WorkerThreads threads;
    private final String instance = UUID.randomUUID().toString().substring(0, 8);
    private final Map<String, TopicTransactions> topics = new ConcurrentHashMap<>();
    private final Map<String, ConsumerGroupMetadata> groups = new ConcurrentHashMap<>();
    private final TransactionMetrics metrics;
    private final InDoubtSettlement settlement;
    /** How a transaction's commit is made: as it is, except in tests that lose its answer. */
    volatile CommitStep commitStep = Runnable::run;

    ResultTransactions(
            @Identifier("default-kafka-broker") Map<String, Object> kafka,
            TransactionSettings config,
            RetrySettings retry,
            PartitionWork work,
            CpuWork cpu,
            WorkerThreads threads,
            MeterRegistry registry) {
        this.kafka = kafka;
        this.config = config;
        this.retry = retry;
        this.work = work;
        this.cpu = cpu;
        this.threads = threads;
        this.metrics = new TransactionMetrics(registry);
        this.settlement = new InDoubtSettlement(
                kafka, "image-worker-transactions-" + instance, config.timeout().multipliedBy(2));
    }

    /**
     * The group metadata of the consumer of {@code topic}, as it is after a rebalance: the generation a transaction's
     * offsets are committed under. Called on Kafka's polling thread.
     */
    public void groupOf(String topic, ConsumerGroupMetadata metadata) {
        groups.put(topic, metadata);
        transactions(topic);
    }

    /**
     * Publishes {@code records} (the result of the record {@code run} took) in the next transaction of its topic, with
     * the offsets it completes; the transaction tells the record's end ({@link InFlight.Run#end}), and then the
     * {@code Uni} completes: whoever acknowledges the record must not tell it again. It fails with
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
            InFlight.Run run,
            List<ProducerRecord<byte[], byte[]>> records,
            Supplier<List<ProducerRecord<byte[], byte[]>>> cut) {
        return submitted(new PendingResult(requestId, run, records, cut));
    }

    /**
     * Parks: publishes {@code copy} of the record {@code run} took in a transaction of its topic with the offsets it
     * completes, as {@link #publish} does a result, but batched with up to {@code transactions.park-max-batch} other
     * copies and after {@code transactions.park-linger} (a backlog parks by the thousand; no producer waits for a
     * park as it waits for a result).
     */
    public Uni<Void> park(String requestId, InFlight.Run run, ProducerRecord<byte[], byte[]> copy) {
        return submitted(PendingResult.parked(requestId, run, copy));
    }

    private Uni<Void> submitted(PendingResult result) {
        transactions(result.record().topic()).submit(result);
        return Uni.createFrom().completionStage(result.done()).chain(() -> cpu.run(() -> null));
    }

    /**
     * A rebalance's last commit of partitions given up: a transaction of its own per topic, after the one in progress
     * of the topic, never below an offset a transaction has committed; waited for (on Kafka's polling thread) at most
     * {@code wait}.
     *
     * @return whether the offsets were committed
     */
    public boolean commitReleased(Map<TopicPartition, OffsetAndMetadata> offsets, Duration wait) {
        Map<String, Map<TopicPartition, OffsetAndMetadata>> byTopic = new HashMap<>();
        offsets.forEach((partition, offset) -> byTopic.computeIfAbsent(partition.topic(), ignored -> new HashMap<>())
                .put(partition, offset));
        boolean all = true;
        for (Map.Entry<String, Map<TopicPartition, OffsetAndMetadata>> topic : byTopic.entrySet()) {
            CompletableFuture<Void> done = transactions(topic.getKey()).commitOffsets(topic.getValue());
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

    private TopicTransactions transactions(String topic) {
        return topics.computeIfAbsent(topic, this::newTransactions);
    }

    private TopicTransactions newTransactions(String topic) {
        TransactionalProducer producer = new TransactionalProducer(
                kafka,
                topic,
                "image-worker-" + topic + "-" + instance,
                config.timeout(),
                retry.infrastructurePatience(),
                commit -> commitStep.commit(commit));
        return new TopicTransactions(
                topic,
                () -> groups.get(topic),
                producer,
                settlement,
                work,
                config,
                retry.infrastructurePatience(),
                metrics,
                threads);
    }

    @PreDestroy
    void close() {
        topics.values().forEach(TopicTransactions::close);
        settlement.close();
    }

    /** A test seam around a transaction's commit, to make it fail in doubt as a broker restarting can. */
    @FunctionalInterface
    interface CommitStep {
        void commit(Runnable commit);
    }
}
