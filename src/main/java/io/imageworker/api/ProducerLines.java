package io.imageworker.api;

import io.imageworker.contract.Lane;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The requests of each producer waiting on this replica for their first gateway call, in one line per lane and
 * producer, in the order they were taken: what {@code GET /requests/{requestId}} answers as a queued request's
 * position. A request joins its line when its record is taken to wait for its turn ({@code messaging.intake.ReadAhead})
 * and leaves it when its first call leaves or its work ends, however.
 *
 * <p>A status query must not walk a deep backlog, so a position is not searched: each line numbers its requests as
 * they join, and a position is the request's number less its line's head's, less the requests between them that left
 * out of order (a refusal, a replay, a record waiting for its partition's window while later ones went by): those few
 * are kept, sorted, until the head passes them. So a query costs O(log n) and the requests that left out of order
 * below it, never more than its producer's waiting requests; nothing is kept for a producer whose line is empty. The
 * turns serve a producer's requests first come first served ({@code turns.FairTurns}), so the order of the line is the
 * order in which its requests get their call slots, but for those that wait longer elsewhere (references, a window).
 */
public final class ProducerLines {

    /** The lines, by lane and producer; a line goes with its last request. Guarded by this. */
    private final Map<Key, Line> lines = new HashMap<>();
    /** The place of each request in a line, by id (the first record's, if copies of one id wait). Guarded by this. */
    private final Map<String, Place> byId = new HashMap<>();

    /** {@code requestId} of {@code producer} joins the line of its lane, last. */
    public synchronized Place join(String requestId, Lane lane, String producer) {
        Key key = new Key(lane, producer);
        Line line = lines.computeIfAbsent(key, ignored -> new Line());
        Place place = new Place(requestId, key, line.next++);
        byId.putIfAbsent(requestId, place);
        return place;
    }

    /**
     * The first call of {@code requestId} left, or its work ended: it waits in no line any more. Nothing when it is in
     * none. Returns the place it left, or null when it stood in none.
     */
    public synchronized Place leave(String requestId) {
        Place place = byId.get(requestId);
        if (place != null) {
            leave(place);
        }
        return place;
    }

    /** {@code place} leaves its line (its request was called, or ended, or was handed over); once, however often. */
    public synchronized void leave(Place place) {
        if (place.left) {
            return;
        }
        place.left = true;
        byId.remove(place.requestId, place);
        Line line = lines.get(place.key);
        line.leave(place.number);
        if (line.empty()) {
            lines.remove(place.key);
        }
    }

    /**
     * Where {@code requestId} stands in its line, with the producers waiting in its lane and whether the other lane
     * has waiting requests (what its share of the calls depends on); empty when it is in no line.
     */
    public synchronized Optional<Standing> standing(String requestId) {
        Place place = byId.get(requestId);
        if (place == null) {
            return Optional.empty();
        }
        List<String> producers = new ArrayList<>();
        boolean otherLaneWaits = false;
        for (Key key : lines.keySet()) {
            if (key.lane == place.key.lane) {
                producers.add(key.producer);
            } else {
                otherLaneWaits = true;
            }
        }
        return Optional.of(new Standing(
                lines.get(place.key).position(place.number),
                place.key.lane,
                place.key.producer,
                producers,
                otherLaneWaits));
    }

    /** Requests waiting in the line of {@code producer} in {@code lane}. */
    public synchronized long waiting(Lane lane, String producer) {
        Line line = lines.get(new Key(lane, producer));
        return line == null ? 0 : line.waiting();
    }

    /** Each line's lane, producer and requests waiting, for the console ({@code console.QueueView}). */
    public synchronized List<LineCount> counts() {
        List<LineCount> counts = new ArrayList<>();
        lines.forEach((key, line) -> counts.add(new LineCount(key.lane, key.producer, line.waiting())));
        return counts;
    }

    /**
     * The requests standing in the first {@code perLine} places of each line, with their positions (in no order): one
     * pass over the requests waiting, for the console, which asks every few seconds while it is open.
     */
    public synchronized List<Queued> firstOfEachLine(int perLine) {
        List<Queued> first = new ArrayList<>();
        for (Place place : byId.values()) {
            Line line = lines.get(place.key);
            if (line != null && place.number - line.head < perLine) {
                first.add(new Queued(place.requestId, place.key.lane, place.key.producer, line.position(place.number)));
            }
        }
        return first;
    }

    /** A line: its lane, its producer and how many requests wait in it. */
    public record LineCount(Lane lane, String producer, long waiting) {}

    /** A request waiting in a line, at {@code position}. */
    public record Queued(String requestId, Lane lane, String producer, long position) {}

    /**
     * Where a request stands in its line.
     *
     * @param position 1 for the first of its producer's requests waiting in its lane, 2 for the next...
     * @param lane its lane
     * @param producer its producer
     * @param producersInLane the producers with requests waiting in its lane (its own too)
     * @param otherLaneWaits whether requests wait in the other lane
     */
    public record Standing(
            long position, Lane lane, String producer, List<String> producersInLane, boolean otherLaneWaits) {}

    /** A request's place in a line. */
    public static final class Place {
        private final String requestId;
        private final Key key;
        private final long number;
        /** Guarded by the lines' lock. */
        private boolean left;

        private Place(String requestId, Key key, long number) {
            this.requestId = requestId;
            this.key = key;
            this.number = number;
        }

        /** The lane of its line. */
        public Lane lane() {
            return key.lane;
        }

        /** The producer of its line. */
        public String producer() {
            return key.producer;
        }
    }

    private record Key(Lane lane, String producer) {}

    /**
     * One producer's line in one lane: numbers given from {@code head} up to {@code next}, less those that left out of
     * order ({@code gaps}, all above the head).
     */
    private static final class Line {
        private long head;
        private long next;
        private final TreeSet<Long> gaps = new TreeSet<>();

        void leave(long number) {
            if (number != head) {
                gaps.add(number);
                return;
            }
            head++;
            while (!gaps.isEmpty() && gaps.first() == head) {
                gaps.pollFirst();
                head++;
            }
        }

        long position(long number) {
            return number - head + 1 - gaps.headSet(number).size();
        }

        long waiting() {
            return next - head - gaps.size();
        }

        boolean empty() {
            return head == next;
        }
    }
}
