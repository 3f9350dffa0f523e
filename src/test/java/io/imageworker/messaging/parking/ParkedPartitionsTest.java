package io.imageworker.messaging.parking;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

/**
 * Each producer parked gets a partition of the parked topic of its own while there are enough; a request parked again
 * goes where it went the first time.
 */
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

    /**
     * Issue 48: a producer's hold ends and another producer takes its partition; its next records go to another one,
     * but a copy of a request it parked before goes where the first copy went, so that one owner reads both.
     */
    @Test
    void aRequestParkedAgainGoesWhereItsFirstCopyWentWhateverItsProducersPartitionIsNow() {
        assertThat(hashed("a", 2)).isEqualTo(hashed("b", 2));
        int first = partitions.of("a", "x", 2);
        assertThat(first).isEqualTo(hashed("a", 2));

        now.addAndGet(ParkedPartitions.HELD.toNanos() + 1);
        assertThat(partitions.of("b", "y", 2))
                .as("a's hold is over: b takes its hashed one")
                .isEqualTo(first);
        int ofANow = partitions.of("a", "z", 2);
        assertThat(ofANow).as("a's records now go to the other one").isNotEqualTo(first);

        assertThat(partitions.of("a", "x", 2)).as("x again: where x went").isEqualTo(first);
        assertThat(partitions.of("c", "x", 2))
                .as("x naming another producer: still where x went")
                .isEqualTo(first);
        assertThat(partitions.of("a", "z", 2)).as("z again: where z went").isEqualTo(ofANow);
        assertThat(partitions.of("a", null, 2))
                .as("a record that is no request: its producer's")
                .isEqualTo(ofANow);
    }

    @Test
    void theRequestsParkedLongestAgoAreForgottenBeyondTheBoundAndOneParkedAgainIsKept() {
        int first = partitions.of("a", "x", 2);
        partitions.of("a", "kept", 2);
        now.addAndGet(ParkedPartitions.HELD.toNanos() + 1);
        // b takes a's partition; then as many other requests of b as the bound, "kept" parked again half-way.
        for (int i = 0; i < ParkedPartitions.REQUESTS_KEPT; i++) {
            if (i == ParkedPartitions.REQUESTS_KEPT / 2) {
                assertThat(partitions.of("a", "kept", 2)).isEqualTo(first);
            }
            partitions.of("b", "b" + i, 2);
        }

        assertThat(partitions.of("a", "kept", 2))
                .as("parked again within the bound: kept")
                .isEqualTo(first);
        assertThat(partitions.of("a", "x", 2))
                .as("x forgotten: a's partition now")
                .isNotEqualTo(first);
    }
}
