package io.imageworker.messaging.offsets;

import io.smallrye.mutiny.subscription.UniEmitter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongPredicate;
import org.apache.kafka.common.TopicPartition;

/**
 * The records waiting for their partition's window to reach them ({@link PartitionWork#within}), by partition and
 * offset, for {@link PartitionWork} (under its lock): each waits as an emitter, completed once it fits.
 */
final class WindowGates {

    private final Map<TopicPartition, TreeMap<Long, List<UniEmitter<? super Void>>>> gates = new HashMap<>();

    /** {@code emitter} waits for {@code offset} of {@code partition} to fit. */
    void close(TopicPartition partition, long offset, UniEmitter<? super Void> emitter) {
        gates.computeIfAbsent(partition, ignored -> new TreeMap<>())
                .computeIfAbsent(offset, ignored -> new ArrayList<>(1))
                .add(emitter);
    }

    /** {@code emitter} waits no more (it was completed, or cancelled). */
    void remove(TopicPartition partition, long offset, UniEmitter<? super Void> emitter) {
        TreeMap<Long, List<UniEmitter<? super Void>>> waiting = gates.get(partition);
        List<UniEmitter<? super Void>> at = waiting == null ? null : waiting.get(offset);
        if (at != null && at.remove(emitter) && at.isEmpty()) {
            waiting.remove(offset);
            if (waiting.isEmpty()) {
                gates.remove(partition);
            }
        }
    }

    /** Takes out the emitters of {@code partition} whose offsets now {@code fit}, lowest first, to be completed. */
    List<UniEmitter<? super Void>> open(TopicPartition partition, LongPredicate fits) {
        List<UniEmitter<? super Void>> open = new ArrayList<>();
        TreeMap<Long, List<UniEmitter<? super Void>>> waiting = gates.get(partition);
        while (waiting != null && !waiting.isEmpty() && fits.test(waiting.firstKey())) {
            open.addAll(waiting.pollFirstEntry().getValue());
        }
        if (waiting != null && waiting.isEmpty()) {
            gates.remove(partition);
        }
        return open;
    }
}
