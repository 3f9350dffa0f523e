package io.imageworker.messaging.offsets;

import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/**
 * The consumer commits the offsets (results published one by one and acknowledged, at least once): the commit
 * strategy's periodic commits are made, a rebalance's last commit is the consumer's {@code commitSync}, and there is no
 * group metadata to keep.
 */
public final class ConsumerCommits implements OffsetCommits {

    @Override
    public void rebalanced(Consumer<?, ?> consumer) {
        // No transaction commits under the group's generation.
    }

    @Override
    public void commitReleased(Consumer<?, ?> consumer, Map<TopicPartition, OffsetAndMetadata> offsets, Duration wait) {
        try {
            consumer.commitSync(offsets);
        } catch (KafkaException e) {
            Log.warnf("Rebalance: could not commit %s (%s); those records are redelivered", offsets, e);
        }
    }

    @Override
    public Uni<Void> periodic(Supplier<Uni<Void>> commit) {
        return commit.get();
    }
}
