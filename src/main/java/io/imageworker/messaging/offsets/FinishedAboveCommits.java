package io.imageworker.messaging.offsets;

import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The channel's consumer as SmallRye's throttled commit strategy sees it, with one change: every commit it makes carries
 * what was finished above the offset committed ({@link FinishedAbove}, from {@link PartitionWork}). The strategy commits
 * every {@code auto.commit.interval.ms} without metadata; a worker killed between two hand-offs then left its next
 * owner no word of the requests it had finished out of order, nor of those it had inherited and not yet seen again, and
 * the next owner published their events a second time. Everything else goes to the consumer unchanged.
 */
final class FinishedAboveCommits<K, V> implements KafkaConsumer<K, V> {

    private final KafkaConsumer<K, V> consumer;
    private final PartitionWork work;
    private final OffsetCommits commits;

    /**
     * @param commits who commits the offsets ({@link OffsetCommits#periodic}): when the results' transactions do, the
     *     strategy's periodic commits are dropped, since one could land after a transaction's and take the committed
     *     offset back below results already published
     */
    FinishedAboveCommits(KafkaConsumer<K, V> consumer, PartitionWork work, OffsetCommits commits) {
        this.consumer = consumer;
        this.work = work;
        this.commits = commits;
    }

    @Override
    public Uni<Void> commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        return commits.periodic(() -> consumer.commit(withFinishedAbove(offsets)));
    }

    @Override
    public Uni<Void> commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        return commits.periodic(() -> consumer.commitAsync(withFinishedAbove(offsets)));
    }

    /** The same offsets, each with the metadata of what was finished above it (a commit's own metadata is kept). */
    Map<TopicPartition, OffsetAndMetadata> withFinishedAbove(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>(offsets.size() * 2);
        offsets.forEach((partition, commit) -> {
            boolean hasOwn = commit.metadata() != null && !commit.metadata().isEmpty();
            commits.put(
                    partition,
                    hasOwn
                            ? commit
                            : new OffsetAndMetadata(
                                    commit.offset(),
                                    commit.leaderEpoch(),
                                    work.finishedAbove(partition, commit.offset())));
        });
        return commits;
    }

    @Override
    public Map<String, ?> configuration() {
        return consumer.configuration();
    }

    @Override
    public <R> Uni<R> runOnPollingThread(Function<org.apache.kafka.clients.consumer.Consumer<K, V>, R> action) {
        return consumer.runOnPollingThread(action);
    }

    @Override
    public Uni<Void> runOnPollingThread(Consumer<org.apache.kafka.clients.consumer.Consumer<K, V>> action) {
        return consumer.runOnPollingThread(action);
    }

    @Override
    public Uni<Set<TopicPartition>> pause() {
        return consumer.pause();
    }

    @Override
    public Uni<Set<TopicPartition>> paused() {
        return consumer.paused();
    }

    @Override
    public Uni<Map<TopicPartition, OffsetAndMetadata>> committed(TopicPartition... partitions) {
        return consumer.committed(partitions);
    }

    @Override
    public Uni<Void> resume() {
        return consumer.resume();
    }

    @Override
    public org.apache.kafka.clients.consumer.Consumer<K, V> unwrap() {
        return consumer.unwrap();
    }

    @Override
    public Uni<Map<TopicPartition, Long>> getPositions() {
        return consumer.getPositions();
    }

    @Override
    public Uni<Set<TopicPartition>> getAssignments() {
        return consumer.getAssignments();
    }

    @Override
    public Uni<Void> seek(TopicPartition partition, long offset) {
        return consumer.seek(partition, offset);
    }

    @Override
    public Uni<Void> seek(TopicPartition partition, OffsetAndMetadata offsetAndMetadata) {
        return consumer.seek(partition, offsetAndMetadata);
    }

    @Override
    public Uni<Void> seekToBeginning(Collection<TopicPartition> partitions) {
        return consumer.seekToBeginning(partitions);
    }

    @Override
    public Uni<Void> seekToEnd(Collection<TopicPartition> partitions) {
        return consumer.seekToEnd(partitions);
    }

    @Override
    public Uni<ConsumerGroupMetadata> consumerGroupMetadata() {
        return consumer.consumerGroupMetadata();
    }

    @Override
    public Uni<Void> resetToLastCommittedPositions() {
        return consumer.resetToLastCommittedPositions();
    }

    @Override
    public Uni<Map<String, List<PartitionInfo>>> lisTopics() {
        return consumer.lisTopics();
    }

    @Override
    public Uni<Map<String, List<PartitionInfo>>> lisTopics(Duration timeout) {
        return consumer.lisTopics(timeout);
    }

    @Override
    public Uni<List<PartitionInfo>> partitionsFor(String topic) {
        return consumer.partitionsFor(topic);
    }
}
