package io.imageworker.messaging.offsets;

import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Who commits the offsets of the request topics, as the commit strategy ({@link FinishedAboveCommits}) and a rebalance
 * ({@link RevocationGrace}) see it: chosen once at start-up with the result sink that implements it ({@code
 * messaging.results.ResultSink}). Either the results' Kafka transactions commit the offsets with the results they
 * complete, a rebalance's last commit included, under the group metadata the last rebalance left; or the consumer
 * commits them ({@link ConsumerCommits}: the strategy's periodic commits, the rebalance's last commit by {@code
 * commitSync}), at least once.
 */
public interface OffsetCommits {

    /**
     * A rebalance assigned or revoked partitions of {@code consumer}: the transactions, if they commit the offsets,
     * take its group metadata, the generation their offsets are committed under. Called on Kafka's polling thread.
     */
    void rebalanced(Consumer<?, ?> consumer);

    /**
     * Commits a rebalance's last offsets of partitions given up ({@link PartitionWork#release}): in a transaction of
     * its own after the transaction in progress, never below an offset a transaction has committed, waited for at most
     * {@code wait}; or by {@code consumer}. Called on Kafka's polling thread; a commit that fails is logged (those
     * records are redelivered).
     */
    void commitReleased(Consumer<?, ?> consumer, Map<TopicPartition, OffsetAndMetadata> offsets, Duration wait);

    /**
     * One of the commit strategy's periodic commits, which {@code commit} makes: made when the consumer commits the
     * offsets; dropped when transactions commit them, since one could land after a transaction's and take the
     * committed offset back below results already published.
     */
    Uni<Void> periodic(Supplier<Uni<Void>> commit);
}
