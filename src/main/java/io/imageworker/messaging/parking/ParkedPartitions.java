package io.imageworker.messaging.parking;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.kafka.common.utils.Utils;

/**
 * The partition of the parked topic each producer's records are parked in. The parked topic is read in partition
 * order, so a producer whose parked records sit behind another's parked backlog in one partition waits for that
 * backlog: each producer parked gets a partition of its own while there are enough, the one its name hashes to (as
 * Kafka's default partitioner would put a record keyed by it: replicas agree without talking) or, when another
 * producer parked recently holds that one, the next free one. A partition is held from a producer's last parked
 * record for {@link #HELD}; a producer that finds none free shares its hashed one. Per replica: two replicas may place
 * two producers differently only when both hash to one partition, and then in the order they first met them.
 */
final class ParkedPartitions {

    /** How long a producer holds its partition after its last record parked. */
    static final Duration HELD = Duration.ofMinutes(1);

    private final LongSupplier nanos;
    private final Map<Integer, Holder> holders = new HashMap<>();

    /** @param nanos the clock, {@link System#nanoTime} but in tests */
    ParkedPartitions(LongSupplier nanos) {
        this.nanos = nanos;
    }

    /** The partition, of {@code partitions}, for the next record of {@code producer} parked. */
    synchronized int of(String producer, int partitions) {
        long now = nanos.getAsLong();
        holders.entrySet()
                .removeIf(held -> held.getKey() >= partitions || now - held.getValue().lastParked > HELD.toNanos());
        int hashed = Utils.toPositive(Utils.murmur2(producer.getBytes(StandardCharsets.UTF_8))) % partitions;
        int free = -1;
        for (int step = 0; step < partitions; step++) {
            int partition = (hashed + step) % partitions;
            Holder holder = holders.get(partition);
            if (holder != null && holder.producer.equals(producer)) {
                free = partition;
                break;
            }
            if (holder == null && free < 0) {
                free = partition;
            }
        }
        if (free < 0) {
            return hashed;
        }
        holders.put(free, new Holder(producer, now));
        return free;
    }

    private record Holder(String producer, long lastParked) {}
}
