package io.imageworker.turns;

import io.imageworker.config.ProducerWeights;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The waiting claims of one lane: a queue per producer with waiting claims, in order of arrival, and each one's credit
 * of the smooth weighted round-robin (each turn every producer waiting and not held gains its weight, the one with the
 * most credit is served and pays the weights of all those that gained). A producer's queue and its credit go when its
 * last waiting claim does: nothing is kept for producers that wait no more, however many there are. Guarded by the
 * lock of its {@link FairTurns}.
 */
final class LaneQueue {
    private final ProducerWeights weights;
    private final Map<String, Producer> producers = new LinkedHashMap<>();
    private int size;

    LaneQueue(ProducerWeights weights) {
        this.weights = weights;
    }

    /** Queues {@code claim} last of its producer, or first when it takes back a place it gave back for a while. */
    void add(Claim claim) {
        Deque<Claim> queue = producers.computeIfAbsent(claim.producer, Producer::new).claims;
        if (claim.returning) {
            queue.addFirst(claim);
        } else {
            queue.addLast(claim);
        }
        size++;
    }

    /** Takes {@code claim} out, if it still waits here; its producer goes with its last claim. */
    void remove(Claim claim) {
        Producer producer = producers.get(claim.producer);
        if (producer != null && producer.claims.remove(claim)) {
            size--;
            if (producer.claims.isEmpty()) {
                producers.remove(claim.producer);
            }
        }
    }

    int size() {
        return size;
    }

    int size(String producer) {
        Producer waiting = producers.get(producer);
        return waiting == null ? 0 : waiting.claims.size();
    }

    int sizeExcept(Set<String> named) {
        int others = 0;
        for (Producer producer : producers.values()) {
            if (!named.contains(producer.name)) {
                others += producer.claims.size();
            }
        }
        return others;
    }

    /** Whether a producer not held has waiting claims. */
    boolean hasUnheld(Predicate<String> held) {
        for (Producer producer : producers.values()) {
            if (!producer.held(held)) {
                return true;
            }
        }
        return false;
    }

    /** The first claim of the producer not held whose turn it is, taken out; null when none waits. */
    Claim poll(Predicate<String> held) {
        if (size == 0) {
            return null;
        }
        Producer next = null;
        long total = 0;
        for (Producer producer : producers.values()) {
            if (producer.held(held)) {
                // Out of the turns while held: it neither gains nor pays credit.
                continue;
            }
            int weight = weights.of(producer.name);
            producer.credit += weight;
            total += weight;
            // Ties go to the producer that has waited longest (the map keeps the order of arrival).
            if (next == null || producer.credit > next.credit) {
                next = producer;
            }
        }
        if (next == null) {
            return null;
        }
        next.credit -= total;
        Claim claim = next.claims.pollFirst();
        size--;
        if (next.claims.isEmpty()) {
            producers.remove(next.name);
        }
        return claim;
    }

    /** A producer with waiting claims in one lane. */
    private static final class Producer {
        final String name;
        final Deque<Claim> claims = new ArrayDeque<>();
        /** Its credit in the smooth weighted round-robin: gains its weight each turn, pays the total when served. */
        long credit;

        Producer(String name) {
            this.name = name;
        }

        /** Whether its first claim gets no place now: it is held, and that claim is not taking one back. */
        boolean held(Predicate<String> held) {
            Claim first = claims.peekFirst();
            return (first == null || !first.returning) && held.test(name);
        }
    }
}
