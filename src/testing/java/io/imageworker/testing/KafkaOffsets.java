package io.imageworker.testing;

import io.smallrye.reactive.messaging.kafka.companion.KafkaCompanion;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What the broker says of topics' ends and of a group's commits, asked through the Kafka companion: how the tests tell
 * what a worker has committed and how many events it has published.
 */
public final class KafkaOffsets {

    private KafkaOffsets() {}

    /** The end offset of every partition of {@code topic}. */
    public static Map<TopicPartition, Long> endOffsets(KafkaCompanion kafka, String topic) {
        List<TopicPartition> partitions = kafka.topics().describe(topic).get(topic).partitions().stream()
                .map(partition -> new TopicPartition(topic, partition.partition()))
                .toList();
        Map<TopicPartition, Long> ends = new HashMap<>();
        kafka.offsets().list(partitions).forEach((partition, end) -> ends.put(partition, end.offset()));
        return ends;
    }

    /** How many records the topics hold (written since they were created). */
    public static long records(KafkaCompanion kafka, String... topics) {
        return Stream.of(topics)
                .flatMap(topic -> endOffsets(kafka, topic).values().stream())
                .mapToLong(Long::longValue)
                .sum();
    }

    /** The group's committed offsets, partitions without a commit left out. */
    public static Map<TopicPartition, OffsetAndMetadata> committed(KafkaCompanion kafka, String group) {
        Map<TopicPartition, OffsetAndMetadata> present = new HashMap<>();
        kafka.consumerGroups().offsets(group).forEach((partition, offset) -> {
            if (offset != null) {
                present.put(partition, offset);
            }
        });
        return present;
    }

    /** Whether {@code group} has committed every record below {@code ends}. */
    public static boolean committedUpTo(KafkaCompanion kafka, String group, Map<TopicPartition, Long> ends) {
        Map<TopicPartition, OffsetAndMetadata> committed = committed(kafka, group);
        return ends.entrySet().stream()
                .allMatch(end -> end.getValue() == 0
                        || committed.containsKey(end.getKey())
                                && committed.get(end.getKey()).offset() >= end.getValue());
    }

    /** Whether {@code group} has committed every record of {@code topic}. */
    public static boolean committedToEnd(KafkaCompanion kafka, String group, String topic) {
        return committedUpTo(kafka, group, endOffsets(kafka, topic));
    }
}
