package io.imageworker.messaging.results;

import io.imageworker.config.KafkaClientConfig;
import io.quarkus.logging.Log;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
 * The transactional producer of one request topic's results, through its lifecycle: made at the first transaction
 * ({@code initTransactions}), a transaction aborted when it fails before its commit, closed when it cannot go on
 * (fenced, out of sequence, refused) or when its commit failed without saying whether it went through, and made anew
 * at the next transaction. Its {@code transactional.id} is the same for every producer of this process and topic: a
 * new one fences the last and settles its transaction first (a commit that timed out is completed or aborted before
 * anything is sent again). Used on the topic's transactions thread alone.
 */
final class TransactionalProducer {

    private final Map<String, Object> kafka;
    private final String topic;
    private final String id;
    private final Duration timeout;
    private final Duration patience;
    private final ResultTransactions.CommitStep commitStep;
    private KafkaProducer<byte[], byte[]> producer;

    /**
     * @param id its {@code transactional.id}, unique to the process and topic
     * @param timeout the transactions' timeout: one left open by a killed worker is aborted by the broker after it
     * @param patience how long a commit that times out is made again
     */
    TransactionalProducer(
            Map<String, Object> kafka,
            String topic,
            String id,
            Duration timeout,
            Duration patience,
            ResultTransactions.CommitStep commitStep) {
        this.kafka = kafka;
        this.topic = topic;
        this.id = id;
        this.timeout = timeout;
        this.patience = patience;
        this.commitStep = commitStep;
    }

    /**
     * Sends {@code records} and commits {@code offsets} under {@code group} in one transaction.
     *
     * @throws CommitInDoubt when the commit of records failed in a way that does not say whether it went through
     *     ({@link InDoubtSettlement}); the producer is closed then, and the next transaction makes a new one
     * @throws KafkaException when the transaction failed before its commit (it was aborted), or its commit of offsets
     *     only did
     */
    void commit(
            List<ProducerRecord<byte[], byte[]>> records,
            Map<TopicPartition, OffsetAndMetadata> offsets,
            ConsumerGroupMetadata group) {
        KafkaProducer<byte[], byte[]> producer = producer();
        boolean committing = false;
        try {
            producer.beginTransaction();
            records.forEach(producer::send);
            if (!offsets.isEmpty()) {
                producer.sendOffsetsToTransaction(offsets, group);
            }
            committing = true;
            commitStep.commit(() -> commitTransaction(producer));
        } catch (ProducerFencedException
                | OutOfOrderSequenceException
                | AuthorizationException
                | UnsupportedVersionException e) {
            // The producer cannot go on: a new one (a new transactional.id epoch) takes over.
            close();
            throw committing && !records.isEmpty() ? new CommitInDoubt(e) : e;
        } catch (KafkaException e) {
            if (committing && !records.isEmpty()) {
                // The commit may have gone through (a broker restarting answers late, or not at all): never
                // aborted and published again on a guess.
                close();
                throw new CommitInDoubt(e);
            }
            abort(producer);
            throw e;
        }
    }

    private void abort(KafkaProducer<byte[], byte[]> producer) {
        try {
            producer.abortTransaction();
        } catch (KafkaException abortFailed) {
            close();
        }
    }

    /**
     * Commits, and commits again after a timeout (the broker may be restarting): a commit that timed out may have
     * gone through, so it is never given up for an abort and a new try, which could publish the batch twice.
     */
    private void commitTransaction(KafkaProducer<byte[], byte[]> producer) {
        long deadline = System.nanoTime() + patience.toNanos();
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

    /**
     * Made anew now: the new producer fences the last and settles the transaction it left, whose commit failed in
     * doubt, before its committed offsets are read ({@link InDoubtSettlement}).
     */
    void renew() {
        close();
        producer();
    }

    private KafkaProducer<byte[], byte[]> producer() {
        if (producer == null) {
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
                                    (int) timeout.toMillis(),
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

    void close() {
        if (producer != null) {
            try {
                producer.close(Duration.ZERO);
            } catch (KafkaException e) {
                Log.debugf("Closing the transactional producer of %s: %s", topic, e.toString());
            }
            producer = null;
        }
    }

    /** A transaction's commit failed without saying whether it went through. */
    static final class CommitInDoubt extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CommitInDoubt(KafkaException cause) {
            super(cause);
        }

        @Override
        public synchronized KafkaException getCause() {
            return (KafkaException) super.getCause();
        }
    }
}
