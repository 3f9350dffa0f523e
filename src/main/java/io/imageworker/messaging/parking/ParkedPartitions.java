package io.imageworker.messaging.parking;

import io.imageworker.progress.RequestsInProgress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
 *
 * <p>One request, one partition: a request parked here before (among the last {@link #REQUESTS_KEPT}) is parked
 * again into the partition it went to then, whatever its producer's partition is now (its hold may have ended and
 * another been picked, or the copy may name another producer). So every copy of one request id this replica parks
 * lies in one partition, read by one owner at a time and in order, where the second copy joins the first in flight
 * or replays its recorded result: never two gateway calls of one id from two replicas reading two parked partitions
 * (issue 48).
 */
final class ParkedPartitions {

    /** How long a producer holds its partition after its last record parked. */
    static final Duration HELD = Duration.ofMinutes(1);

    /**
     * How many requests parked last keep their partition: as many as the replica remembers as parked here ({@link
     * RequestsInProgress#PARKED_KEPT}).
     */
    static final int REQUESTS_KEPT = RequestsInProgress.PARKED_KEPT;

    private final LongSupplier nanos;
    private final Map<Integer, Holder> holders = new HashMap<>();
    /** The partition of each request parked last, the one parked or looked up longest ago first. */
    private final Map<String, Integer> ofRequest = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
            return size() > REQUESTS_KEPT;
        }
    };

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

    /**
     * The partition, of {@code partitions}, for the record of request {@code requestId} (null: a record that is no
     * request) of {@code producer} parked now: the one a copy of the request parked here lately went to, else its
     * producer's ({@link #of(String, int)}), remembered for the request's later copies. A partition remembered beyond
     * the topic's partitions now (it shrank, which Kafka does not do) is not reused.
     */
    synchronized int of(String producer, String requestId, int partitions) {
        if (requestId == null) {
            return of(producer, partitions);
        }
        Integer before = ofRequest.get(requestId);
        if (before != null && before < partitions) {
            return before;
        }
        int partition = of(producer, partitions);
        ofRequest.put(requestId, partition);
        return partition;
    }

    private record Holder(String producer, long lastParked) {}
}
