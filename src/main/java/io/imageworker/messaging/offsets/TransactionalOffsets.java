package io.imageworker.messaging.offsets;

import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The results' transactions as a rebalance sees them ({@link RevocationGrace}): when results are published in Kafka
 * transactions together with the offsets they complete ({@code messaging.results.ResultTransactions} implements this), those
 * transactions commit the offsets, a rebalance's last commit included, and commit them under the group metadata the
 * last rebalance left.
 */
public interface TransactionalOffsets {

    /** Whether results, and with them the offsets, go out in transactions (else the consumer commits the offsets). */
    boolean enabled();

    /**
     * The group metadata of the consumer of {@code topic}, as it is after a rebalance: the generation a transaction's
     * offsets are committed under. Called on Kafka's polling thread.
     */
    void groupOf(String topic, ConsumerGroupMetadata metadata);

    /**
     * Commits a rebalance's last offsets of partitions given up ({@link PartitionWork#release}) in a transaction of its
     * own, after the transaction in progress, never below an offset a transaction has committed. Waits for it (on
     * Kafka's polling thread) at most {@code wait}.
     *
     * @return whether the offsets were committed
     */
    boolean commitReleased(Map<TopicPartition, OffsetAndMetadata> offsets, Duration wait);
}
