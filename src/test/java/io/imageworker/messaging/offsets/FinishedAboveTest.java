package io.imageworker.messaging.offsets;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class FinishedAboveTest {

    private static TreeSet<Long> offsets(long... offsets) {
        TreeSet<Long> set = new TreeSet<>();
        LongStream.of(offsets).forEach(set::add);
        return set;
    }

    @Test
    void writesDistancesFromTheCommittedOffsetAsNumbersAndRanges() {
        String metadata = FinishedAbove.encode(100, offsets(98, 100, 101, 103, 104, 105, 112));

        assertThat(metadata).isEqualTo("iw1:1,3-5,12");
        assertThat(FinishedAbove.decode(100, metadata)).containsExactly(101L, 103L, 104L, 105L, 112L);
    }

    @Test
    void writesNothingWhenNothingFinishedAboveTheOffset() {
        assertThat(FinishedAbove.encode(7, offsets(3, 6, 7))).isEmpty();
        assertThat(FinishedAbove.encode(7, offsets())).isEmpty();
    }

    @Test
    void keepsTheNearestOffsetsWithinKafkasMetadataLimit() {
        TreeSet<Long> scattered = new TreeSet<>();
        LongStream.range(0, 2_000).forEach(i -> scattered.add(1_000_000 + 2 * i + 1));

        String metadata = FinishedAbove.encode(1_000_000, scattered);

        assertThat(metadata.length()).isLessThanOrEqualTo(FinishedAbove.MAX_LENGTH);
        TreeSet<Long> read = new TreeSet<>(FinishedAbove.decode(1_000_000, metadata));
        assertThat(read).isNotEmpty().isSubsetOf(scattered);
        assertThat(read.first()).isEqualTo(1_000_001L);
        // Only a prefix is kept: nothing kept lies beyond something dropped.
        assertThat(read).isEqualTo(new TreeSet<>(scattered.headSet(read.last(), true)));
    }

    @Test
    void keepsEveryOffsetFinishedWithinTheWindowWhateverThePattern() {
        long committed = 7_000_000;
        List<TreeSet<Long>> patterns = new ArrayList<>();
        // Periodic: j of every k offsets finished (every other single, pairs as ranges, ...), the worst cases.
        for (int period = 2; period <= 6; period++) {
            for (int finishedPerPeriod = 1; finishedPerPeriod < period; finishedPerPeriod++) {
                TreeSet<Long> set = new TreeSet<>();
                for (long distance = 1; distance < FinishedAbove.WINDOW; distance++) {
                    if (distance % period < finishedPerPeriod) {
                        set.add(committed + distance);
                    }
                }
                patterns.add(set);
            }
        }
        Random random = new Random(42);
        for (int i = 0; i < 200; i++) {
            TreeSet<Long> set = new TreeSet<>();
            double density = random.nextDouble();
            for (long distance = 1; distance < FinishedAbove.WINDOW; distance++) {
                if (random.nextDouble() < density) {
                    set.add(committed + distance);
                }
            }
            patterns.add(set);
        }

        for (TreeSet<Long> finished : patterns) {
            String metadata = FinishedAbove.encode(committed, finished);
            assertThat(metadata.length()).isLessThanOrEqualTo(FinishedAbove.MAX_LENGTH);
            assertThat(FinishedAbove.decode(committed, metadata)).isEqualTo(finished);
        }
    }

    @Test
    void readsMetadataItDidNotWriteAsNothingFinished() {
        for (String metadata :
                List.of("", "something else", "iw1:", "iw1:x", "iw1:0", "iw1:5-3", "iw1:-4", "iw1:1,,2")) {
            assertThat(FinishedAbove.decode(10, metadata)).as(metadata).isEmpty();
        }
        assertThat(FinishedAbove.decode(10, null)).isEmpty();
    }
}
