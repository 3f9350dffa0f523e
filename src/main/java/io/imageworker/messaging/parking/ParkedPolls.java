package io.imageworker.messaging.parking;

import io.quarkus.arc.Arc;
import io.quarkus.arc.InstanceHandle;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Tells {@link ParkedHolds} what the parked topic's consumer polled, partition by partition, as it polls (a Kafka
 * consumer interceptor, {@code interceptor.classes} of the {@code parked-requests} channel): the records SmallRye
 * queues before the lane takes them count toward their partition's share.
 */
public class ParkedPolls implements ConsumerInterceptor<Object, Object> {

    private ParkedHolds holds;

    @Override
    public void configure(Map<String, ?> configs) {
        if (Arc.container() != null) {
            InstanceHandle<ParkedHolds> handle = Arc.container().instance(ParkedHolds.class);
            holds = handle.isAvailable() ? handle.get() : null;
        }
    }

    @Override
    public ConsumerRecords<Object, Object> onConsume(ConsumerRecords<Object, Object> records) {
        if (holds != null && !records.isEmpty()) {
            holds.polled(records);
        }
        return records;
    }

    @Override
    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {}

    @Override
    public void close() {}
}
