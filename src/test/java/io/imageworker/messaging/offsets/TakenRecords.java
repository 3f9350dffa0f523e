package io.imageworker.messaging.offsets;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/** Records as the worker takes them: one copy of a record taken once, a copy of its own for each time it is taken again. */
final class TakenRecords {

    private final Map<String, RecordCopy> taken = new HashMap<>();

    /** The copy of the record at this offset the worker took (one per test: the same record taken once). */
    RecordCopy record(TopicPartition partition, long offset) {
        return taken.computeIfAbsent(partition + "@" + offset, ignored -> takenAgain(partition, offset));
    }

    /** Another copy of the record at this offset, as Kafka delivers it again after a rebalance. */
    static RecordCopy takenAgain(TopicPartition partition, long offset) {
        return new Copy(partition.topic(), partition.partition(), offset);
    }

    /** A copy: told apart from the others by identity, as the worker tells them apart. */
    private record Copy(String topic, int partition, long offset) implements RecordCopy {}
}
