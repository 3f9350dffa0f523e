package io.imageworker.testing.launch;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/** What the broker says of a topic's end and a group's commits: how the launch tests tell what was committed. */
public final class KafkaOffsets {

    private KafkaOffsets() {}

    /** The end offset of every partition of {@code topic}. */
    public static Map<TopicPartition, Long> endOffsets(Admin admin, String topic)
            throws ExecutionException, InterruptedException, TimeoutException {
        int partitions = admin.describeTopics(List.of(topic))
                .allTopicNames()
                .get(10, TimeUnit.SECONDS)
                .get(topic)
                .partitions()
                .size();
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int i = 0; i < partitions; i++) {
            request.put(new TopicPartition(topic, i), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        admin.listOffsets(request)
                .all()
                .get(10, TimeUnit.SECONDS)
                .forEach((partition, info) -> ends.put(partition, info.offset()));
        return ends;
    }

    /** The group's committed offsets, partitions without a commit left out. */
    public static Map<TopicPartition, OffsetAndMetadata> committed(Admin admin, String group)
            throws ExecutionException, InterruptedException, TimeoutException {
        Map<TopicPartition, OffsetAndMetadata> present = new HashMap<>();
        admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata()
                .get(10, TimeUnit.SECONDS)
                .forEach((partition, offset) -> {
                    if (offset != null) {
                        present.put(partition, offset);
                    }
                });
        return present;
    }

    /** Whether {@code committed} covers every record below {@code ends}. */
    public static boolean covers(Map<TopicPartition, OffsetAndMetadata> committed, Map<TopicPartition, Long> ends) {
        return ends.entrySet().stream()
                .allMatch(end -> end.getValue() == 0
                        || committed.containsKey(end.getKey())
                                && committed.get(end.getKey()).offset() >= end.getValue());
    }
}
