package io.imageworker.messaging.offsets;

/**
 * One copy of a record taken from a request topic: where it sits. Kafka delivers a record again after a rebalance,
 * and each delivery is a copy of its own, told apart by identity, not by position: only the copy that runs here may end
 * its record ({@link PartitionWork#runs}).
 */
public interface RecordCopy {

    /** The request topic it was taken from. */
    String topic();

    /** Its partition. */
    int partition();

    /** Its offset in the partition. */
    long offset();
}
