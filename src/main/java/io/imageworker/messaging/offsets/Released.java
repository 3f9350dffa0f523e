package io.imageworker.messaging.offsets;

import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What a release of partitions ({@link PartitionWork#release}) leaves.
 *
 * @param commits the offset of each partition below which every record was acknowledged, with those acknowledged
 *     above it in the metadata ({@link FinishedAbove})
 * @param finished requests that ended while the release waited
 * @param givenUp requests still running when the grace ended: their records go to the new owner, which may call
 *     the gateway for them again
 * @param handedOver records that were still waiting for their turn (read ahead), or for their first gateway call:
 *     they go to the new owner too, but no call was made for them here, so none is made twice
 * @param uncommittable the group refused this worker's commits during the wait ({@link
 *     PartitionWork#uncommittable()}): the commits would be refused too
 */
record Released(
        Map<TopicPartition, OffsetAndMetadata> commits,
        int finished,
        int givenUp,
        int handedOver,
        boolean uncommittable) {}
