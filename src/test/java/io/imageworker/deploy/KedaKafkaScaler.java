package io.imageworker.deploy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * KEDA's Kafka scaler, as its source computes a trigger's lag and activity ({@code pkg/scalers/kafka_scaler.go},
 * KEDA 2.20: {@code getLagForPartition}, {@code getTotalLag}, {@code GetMetricsAndActivity}), on a real broker through
 * the AdminClient: a partition's lag is its latest offset (ListOffsets without an isolation level, so the high
 * watermark, commit markers included) minus the group's committed offset; a partition the group never committed on
 * counts its latest offset ({@code earliest}) or 1 ({@code latest}). With {@code excludePersistentLag} a partition whose
 * committed offset has not moved since the scaler's previous look counts 0 in the metric, but its whole lag still in
 * the activity. The metric stops at {@code lagThreshold} x the partitions (those with lag, under
 * {@code limitToPartitionsWithLag}). One instance is one trigger's scaler: it remembers the offsets it saw, as KEDA's
 * cached scaler does.
 */
final class KedaKafkaScaler {

    /** A trigger's settings, read from its metadata with KEDA's defaults. */
    record Trigger(
            String topic,
            String group,
            long lagThreshold,
            long activationLagThreshold,
            boolean earliest,
            boolean limitToPartitionsWithLag,
            boolean excludePersistentLag,
            boolean allowIdleConsumers) {

        static Trigger of(Map<String, String> metadata) {
            return new Trigger(
                    metadata.get("topic"),
                    metadata.get("consumerGroup"),
                    Long.parseLong(metadata.getOrDefault("lagThreshold", "10")),
                    Long.parseLong(metadata.getOrDefault("activationLagThreshold", "0")),
                    metadata.getOrDefault("offsetResetPolicy", "latest").equals("earliest"),
                    Boolean.parseBoolean(metadata.getOrDefault("limitToPartitionsWithLag", "false")),
                    Boolean.parseBoolean(metadata.getOrDefault("excludePersistentLag", "false")),
                    Boolean.parseBoolean(metadata.getOrDefault("allowIdleConsumers", "false")));
        }
    }

    /**
     * One look: the metric the autoscaler gets, the lag KEDA decides activity on, whether the trigger is active, and
     * each partition's lag (before any exclusion).
     */
    record Reading(long metric, long lagWithPersistent, boolean active, Map<Integer, Long> lags) {

        /** The replicas this trigger asks the autoscaler for: the metric over the target average, rounded up. */
        long replicas(Trigger trigger) {
            return (metric + trigger.lagThreshold() - 1) / trigger.lagThreshold();
        }
    }

    private final Trigger trigger;
    private final Map<Integer, Long> previousOffsets = new HashMap<>();

    KedaKafkaScaler(Trigger trigger) {
        this.trigger = trigger;
    }

    Trigger trigger() {
        return trigger;
    }

    Reading look(Admin admin) throws ExecutionException, InterruptedException, TimeoutException {
        TopicDescription description = admin.describeTopics(List.of(trigger.topic()))
                .allTopicNames()
                .get(10, TimeUnit.SECONDS)
                .get(trigger.topic());
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        description
                .partitions()
                .forEach(p -> latest.put(new TopicPartition(trigger.topic(), p.partition()), OffsetSpec.latest()));
        var ends = admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS);
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(trigger.group())
                .partitionsToOffsetAndMetadata()
                .get(10, TimeUnit.SECONDS);

        long totalLag = 0;
        long totalLagWithPersistent = 0;
        long partitionsWithLag = 0;
        Map<Integer, Long> lags = new HashMap<>();
        for (TopicPartition partition : latest.keySet()) {
            long end = ends.get(partition).offset();
            OffsetAndMetadata offset = committed.get(partition);
            long lag;
            long withPersistent;
            if (offset == null) {
                lag = trigger.earliest() ? end : 1;
                withPersistent = lag;
            } else {
                withPersistent = end - offset.offset();
                lag = withPersistent;
                if (trigger.excludePersistentLag()) {
                    Long previous = previousOffsets.put(partition.partition(), offset.offset());
                    if (previous != null && previous == offset.offset()) {
                        lag = 0;
                    }
                }
            }
            lags.put(partition.partition(), withPersistent);
            totalLag += lag;
            totalLagWithPersistent += withPersistent;
            if (lag > 0) {
                partitionsWithLag++;
            }
        }
        if (!trigger.allowIdleConsumers() || trigger.limitToPartitionsWithLag()) {
            long upperBound = trigger.limitToPartitionsWithLag() ? partitionsWithLag : latest.size();
            if (totalLag / trigger.lagThreshold() > upperBound) {
                totalLag = upperBound * trigger.lagThreshold();
            }
        }
        return new Reading(
                totalLag, totalLagWithPersistent, totalLagWithPersistent > trigger.activationLagThreshold(), lags);
    }

    /**
     * The replicas a ScaledObject of these triggers settles on (no {@code scalingModifiers}; the autoscaler's 10%
     * tolerance and its stabilization aside): none when no trigger is active and {@code minReplicaCount} is 0 (after
     * the cooldown), else the most any trigger asks for, between {@code max(minReplicaCount, 1)} and
     * {@code maxReplicaCount}.
     */
    static long replicas(Map<KedaKafkaScaler, Reading> readings, int minReplicaCount, int maxReplicaCount) {
        boolean active = readings.values().stream().anyMatch(Reading::active);
        if (!active && minReplicaCount == 0) {
            return 0;
        }
        long asked = readings.entrySet().stream()
                .mapToLong(e -> e.getValue().replicas(e.getKey().trigger()))
                .max()
                .orElse(0);
        return Math.min(Math.max(asked, Math.max(minReplicaCount, 1)), maxReplicaCount);
    }
}
