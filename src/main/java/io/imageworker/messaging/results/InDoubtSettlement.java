package io.imageworker.messaging.results;

import io.imageworker.config.KafkaClientConfig;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/**
 * Whether a transaction whose commit failed without saying went through, told by the group's committed offsets read
 * through an Admin client (made at the first doubt, shared by every request topic). Its transactional producer has
 * been made anew first ({@link TransactionalProducer#renew}), which settles the transaction (completes a commit the
 * coordinator had prepared, aborts one it had not); the offsets read then, stable, are this transaction's if and only
 * if it was committed: the topic's transactions thread is the only one committing the partitions it holds, and a
 * commit of finished requests always moves a partition's offset or metadata.
 */
final class InDoubtSettlement {

    private final Map<String, Object> kafka;
    private final String clientId;
    private final Duration readWait;
    private Admin admin;

    /**
     * @param readWait how long a read of the committed offsets may take: a transaction still open on them is waited
     *     for, up to its timeout
     */
    InDoubtSettlement(Map<String, Object> kafka, String clientId, Duration readWait) {
        this.kafka = kafka;
        this.clientId = clientId;
        this.readWait = readWait;
    }

    /** Whether {@code group} has committed exactly {@code offsets} (offset and metadata), read stable. */
    boolean wentThrough(String group, Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<TopicPartition, OffsetAndMetadata> now = committedOffsets(group, offsets.keySet());
        return offsets.entrySet().stream().allMatch(sent -> {
            OffsetAndMetadata read = now.get(sent.getKey());
            return read != null
                    && read.offset() == sent.getValue().offset()
                    && read.metadata().equals(sent.getValue().metadata());
        });
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
                    .get(readWait.toMillis(), TimeUnit.MILLISECONDS);
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
                    kafka, AdminClientConfig.configNames(), Map.of(AdminClientConfig.CLIENT_ID_CONFIG, clientId)));
        }
        return admin;
    }

    synchronized void close() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(1));
        }
    }
}
