package io.imageworker.messaging.results;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The offsets the transactions of one request topic committed, so that neither a rebalance's last commit nor a
 * periodic commit of offsets only ever goes below them, and the periodic one commits only what advanced. Used on the
 * topic's transactions thread alone.
 */
final class CommittedOffsets {

    private final Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();

    /** A transaction committed {@code offsets}. */
    void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
        offsets.forEach((partition, offset) ->
                committed.merge(partition, offset, (old, now) -> now.offset() >= old.offset() ? now : old));
    }

    /**
     * Of {@code commits}, those that advanced since the last commit: a higher offset, or the same offset with other
     * finished-above metadata (records finished above it since).
     */
    Map<TopicPartition, OffsetAndMetadata> advanced(Map<TopicPartition, OffsetAndMetadata> commits) {
        Map<TopicPartition, OffsetAndMetadata> advanced = new HashMap<>();
        commits.forEach((partition, offset) -> {
            OffsetAndMetadata already = committed.get(partition);
            if (already == null
                    || offset.offset() > already.offset()
                    || offset.offset() == already.offset() && !offset.metadata().equals(already.metadata())) {
                advanced.put(partition, offset);
            }
        });
        return advanced;
    }

    /** {@code offsets}, each raised to the one committed already when that is higher. */
    Map<TopicPartition, OffsetAndMetadata> notBelowCommitted(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<TopicPartition, OffsetAndMetadata> ahead = new HashMap<>();
        offsets.forEach((partition, offset) -> {
            OffsetAndMetadata already = committed.get(partition);
            ahead.put(partition, already != null && already.offset() > offset.offset() ? already : offset);
        });
        return ahead;
    }

    /** The partitions are another's now; if they come back, what was committed is read again. */
    void forget(Collection<TopicPartition> partitions) {
        partitions.forEach(committed::remove);
    }
}
