package io.imageworker.console;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The requests the console knows, the last changed kept: at most {@code maxEntries} of them and {@code maxBytes} of
 * them as {@link ConsoleEntry#bytes()} counts, the least recently changed forgotten first. Each change is numbered
 * ({@link ConsoleEntry#seq()}), so that a page that has seen up to a number asks only for what changed since ({@link
 * #since}): the server-sent events read it this way, with no queue kept per client. Every method is short and
 * synchronized: the console's reader writes, the pages read.
 */
final class ConsoleFeed {

    /** The bound in bytes of the default feed: the entries' own count, well above what 10,000 entries take. */
    static final long MAX_BYTES = 16L * 1024 * 1024;

    private final int maxEntries;
    private final long maxBytes;
    private final Map<String, ConsoleEntry> byId = new HashMap<>();
    private final TreeMap<Long, ConsoleEntry> bySeq = new TreeMap<>();
    private final Map<String, Integer> producers = new HashMap<>();
    private long seq;
    private long bytes;
    private long forgotten;

    ConsoleFeed(int maxEntries, long maxBytes) {
        this.maxEntries = Math.max(1, maxEntries);
        this.maxBytes = maxBytes;
    }

    /**
     * Takes {@code update} as the request's latest state, unless the request has ended already and {@code update} does
     * not end it (a late or redelivered {@code image.started}, a request sent again from the console): an ended
     * request stays ended. Returns whether it was taken.
     */
    synchronized boolean apply(ConsoleEntry update) {
        ConsoleEntry before = byId.get(update.requestId());
        if (before != null) {
            if (ConsoleEntry.terminal(before.state()) && !ConsoleEntry.terminal(update.state())) {
                return false;
            }
            remove(before);
        }
        ConsoleEntry numbered = (before == null ? update : update.over(before)).numbered(++seq);
        byId.put(numbered.requestId(), numbered);
        bySeq.put(numbered.seq(), numbered);
        producers.merge(producerOf(numbered), 1, Integer::sum);
        bytes += numbered.bytes();
        while (byId.size() > maxEntries || (bytes > maxBytes && byId.size() > 1)) {
            remove(bySeq.firstEntry().getValue());
            forgotten++;
        }
        return true;
    }

    private void remove(ConsoleEntry entry) {
        byId.remove(entry.requestId());
        bySeq.remove(entry.seq());
        producers.computeIfPresent(producerOf(entry), (name, count) -> count > 1 ? count - 1 : null);
        bytes -= entry.bytes();
    }

    private static String producerOf(ConsoleEntry entry) {
        return entry.producer() == null ? "default" : entry.producer();
    }

    /** The entry of {@code requestId}, if kept. */
    synchronized Optional<ConsoleEntry> find(String requestId) {
        return Optional.ofNullable(byId.get(requestId));
    }

    /** The entries changed after {@code after}, oldest change first, at most {@code limit}. */
    synchronized List<ConsoleEntry> since(long after, int limit) {
        List<ConsoleEntry> changed = new ArrayList<>();
        for (ConsoleEntry entry : bySeq.tailMap(after, false).values()) {
            if (changed.size() >= limit) {
                break;
            }
            changed.add(entry);
        }
        return changed;
    }

    /** The last changed entries that {@code filter} takes, the latest first, at most {@code limit}. */
    synchronized List<ConsoleEntry> latest(Predicate<ConsoleEntry> filter, int limit) {
        List<ConsoleEntry> latest = new ArrayList<>();
        NavigableMap<Long, ConsoleEntry> newestFirst = bySeq.descendingMap();
        for (ConsoleEntry entry : newestFirst.values()) {
            if (latest.size() >= limit) {
                break;
            }
            if (filter.test(entry)) {
                latest.add(entry);
            }
        }
        return latest;
    }

    /** The number of the last change (0: none yet). */
    synchronized long seq() {
        return seq;
    }

    /** The producers of the entries kept, with how many each. */
    synchronized Map<String, Integer> producers() {
        return new TreeMap<>(producers);
    }

    /** Entries kept. */
    synchronized int size() {
        return byId.size();
    }

    /** Bytes of the entries kept, as {@link ConsoleEntry#bytes()} counts them. */
    synchronized long bytes() {
        return bytes;
    }

    /** Entries forgotten to keep the bounds. */
    synchronized long forgotten() {
        return forgotten;
    }

    /** The bound on entries. */
    int maxEntries() {
        return maxEntries;
    }
}
