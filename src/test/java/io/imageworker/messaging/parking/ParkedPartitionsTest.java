package io.imageworker.messaging.parking;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

/** Each producer parked gets a partition of the parked topic of its own while there are enough. */
class ParkedPartitionsTest {

    private final AtomicLong now = new AtomicLong();
    private final ParkedPartitions partitions = new ParkedPartitions(now::get);

    private static int hashed(String producer, int count) {
        return Utils.toPositive(Utils.murmur2(producer.getBytes(StandardCharsets.UTF_8))) % count;
    }

    @Test
    void twoProducersWhoseNamesHashToOnePartitionAreParkedInTwo() {
        // "a" and "b" hash to the same one of 4 partitions (Kafka's murmur2, as the default partitioner).
        assertThat(hashed("a", 4)).isEqualTo(hashed("b", 4));

        int ofA = partitions.of("a", 4);
        int ofB = partitions.of("b", 4);

        assertThat(ofA).isEqualTo(hashed("a", 4));
        assertThat(ofB).isNotEqualTo(ofA);
        assertThat(partitions.of("a", 4)).isEqualTo(ofA);
        assertThat(partitions.of("b", 4)).isEqualTo(ofB);
    }

    @Test
    void aPartitionHeldNoLongerGoesToTheNextProducerAndWithNoneFreeAProducerSharesItsHashedOne() {
        int ofA = partitions.of("a", 1);
        assertThat(partitions.of("b", 1))
                .as("none free: its hashed one, shared")
                .isEqualTo(ofA);

        now.addAndGet(ParkedPartitions.HELD.toNanos() + 1);
        assertThat(partitions.of("b", 2)).isEqualTo(hashed("b", 2));
        assertThat(partitions.of("a", 2)).as("a's hold is over: the other one").isNotEqualTo(hashed("b", 2));
    }
}
