package io.imageworker.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.contract.Lane;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The lines a queued request's position is read from: a position is its number in its producer's line less those
 * that left before it, whatever order they leave in, and a line is gone with its last request.
 */
class ProducerLinesTest {

    private final ProducerLines lines = new ProducerLines();

    private List<ProducerLines.Place> join(int count, String producer) {
        List<ProducerLines.Place> places = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            places.add(lines.join(producer + "-" + i, Lane.NORMAL, producer));
        }
        return places;
    }

    private long position(String requestId) {
        return lines.standing(requestId).orElseThrow().position();
    }

    @Test
    void eachProducersRequestsStandInTheOrderTheyJoined() {
        join(3, "a");
        join(2, "b");

        assertThat(position("a-0")).isEqualTo(1);
        assertThat(position("a-2")).isEqualTo(3);
        assertThat(position("b-1")).isEqualTo(2);
        assertThat(lines.standing("b-1").orElseThrow().producersInLane()).containsExactlyInAnyOrder("a", "b");
        assertThat(lines.standing("b-1").orElseThrow().otherLaneWaits()).isFalse();
    }

    @Test
    void theHeadLeavingMovesEveryoneUp() {
        join(4, "a");

        lines.leave("a-0");

        assertThat(position("a-1")).isEqualTo(1);
        assertThat(position("a-3")).isEqualTo(3);
        assertThat(lines.standing("a-0")).isEmpty();
    }

    @Test
    void requestsThatLeaveOutOfOrderAreNotCountedAheadOfThoseBehindThem() {
        List<ProducerLines.Place> places = join(6, "a");

        lines.leave(places.get(2));
        lines.leave(places.get(4));

        assertThat(position("a-1")).isEqualTo(2);
        assertThat(position("a-3")).isEqualTo(3);
        assertThat(position("a-5")).isEqualTo(4);
        assertThat(lines.waiting(Lane.NORMAL, "a")).isEqualTo(4);

        // The head leaves: it passes the gap right behind its successor, not the later one.
        lines.leave(places.get(0));
        lines.leave(places.get(1));

        assertThat(position("a-3")).isEqualTo(1);
        assertThat(position("a-5")).isEqualTo(2);
        assertThat(lines.waiting(Lane.NORMAL, "a")).isEqualTo(2);
    }

    @Test
    void leavingTwiceCountsOnceAndAnEmptyLineIsGone() {
        List<ProducerLines.Place> places = join(2, "a");

        lines.leave(places.get(1));
        lines.leave(places.get(1));
        lines.leave("a-1");

        assertThat(position("a-0")).isEqualTo(1);
        lines.leave(places.get(0));
        assertThat(lines.waiting(Lane.NORMAL, "a")).isZero();

        // A new line starts afresh.
        lines.join("again", Lane.NORMAL, "a");
        assertThat(position("again")).isEqualTo(1);
    }

    @Test
    void eachLaneHasItsOwnLines() {
        join(2, "a");
        lines.join("urgent", Lane.PRIORITY, "a");

        ProducerLines.Standing urgent = lines.standing("urgent").orElseThrow();

        assertThat(urgent.position()).isEqualTo(1);
        assertThat(urgent.lane()).isEqualTo(Lane.PRIORITY);
        assertThat(urgent.otherLaneWaits()).isTrue();
        assertThat(urgent.producersInLane()).containsExactly("a");
    }
}
