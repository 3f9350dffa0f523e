package io.imageworker.messaging.offsets;

import java.util.HashSet;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The requests of one partition this worker holds, for {@link PartitionWork} (under its lock): the copies running,
 * those waiting for their turn or their first gateway call, those that made one, and the offsets acknowledged above
 * the committable one.
 */
final class PartitionRequests {
    /** The copy of each record running, by offset: only that copy's end counts. */
    final TreeMap<Long, RecordCopy> running = new TreeMap<>();

    final TreeSet<Long> unacknowledged = new TreeSet<>();
    /**
     * Offsets running that still wait for their turn ({@code messaging.intake.ReadAhead}): a revocation does not wait
     * for them.
     */
    final Set<Long> waiting = new HashSet<>();
    /**
     * Offsets running that wait to make their first gateway call ({@link PartitionWork#waitsToCall}): a revocation
     * does not wait for them either.
     */
    final Set<Long> parked = new HashSet<>();
    /** Offsets running that have made a gateway call ({@link PartitionWork#callLeaves}): a revocation waits for them. */
    final Set<Long> called = new HashSet<>();
    /** Acknowledged offsets at or above the committable one: the commit's metadata. */
    final TreeSet<Long> finished = new TreeSet<>();

    long lastAcknowledged = -1;
    /** Records that ended without starting because their turn came during this partition's revocation. */
    int handedOver;

    /** Removes this copy of its record from those running, if it is the one running. */
    boolean removeRunning(RecordCopy record) {
        if (running.get(record.offset()) != record) {
            return false;
        }
        running.remove(record.offset());
        waiting.remove(record.offset());
        parked.remove(record.offset());
        called.remove(record.offset());
        return true;
    }

    /** Requests running that a revocation waits for: neither waiting for their turn nor for their first call. */
    int working() {
        int working = 0;
        for (Long offset : running.keySet()) {
            if (!waiting.contains(offset) && !parked.contains(offset)) {
                working++;
            }
        }
        return working;
    }

    PartitionRequests copy() {
        PartitionRequests copy = new PartitionRequests();
        copy.running.putAll(running);
        copy.waiting.addAll(waiting);
        copy.unacknowledged.addAll(unacknowledged);
        copy.finished.addAll(finished);
        copy.lastAcknowledged = lastAcknowledged;
        return copy;
    }

    void acknowledged(long offset) {
        lastAcknowledged = Math.max(lastAcknowledged, offset);
        finished.add(offset);
        committable().ifPresent(below -> finished.headSet(below).clear());
    }

    /** The first offset taken and not acknowledged, or -1. */
    long firstPending() {
        long first = running.isEmpty() ? Long.MAX_VALUE : running.firstKey();
        if (!unacknowledged.isEmpty()) {
            first = Math.min(first, unacknowledged.first());
        }
        return first == Long.MAX_VALUE ? -1 : first;
    }

    OptionalLong committable() {
        long first = firstPending();
        if (first >= 0) {
            return OptionalLong.of(first);
        }
        return lastAcknowledged < 0 ? OptionalLong.empty() : OptionalLong.of(lastAcknowledged + 1);
    }
}
