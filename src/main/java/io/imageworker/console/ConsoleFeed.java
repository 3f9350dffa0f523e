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
 *
 * <p>Where a {@code requestId} is unique only within its producer (producers taken from their topics, issue 49), an
 * entry is kept by its producer and its id ({@code perProducer}): two producers' requests of one id are two entries,
 * and an event of one never changes the other's (its producer is on every event the worker writes then, {@code
 * image.started} included).
 */
final class ConsoleFeed {

    /** The bound in bytes of the default feed: the entries' own count, well above what 10,000 entries take. */
    static final long MAX_BYTES = 16L * 1024 * 1024;

    private final int maxEntries;
    private final long maxBytes;
    private final boolean perProducer;
    private final Map<String, ConsoleEntry> byId = new HashMap<>();
    private final TreeMap<Long, ConsoleEntry> bySeq = new TreeMap<>();
    private final Map<String, Integer> producers = new HashMap<>();
    private long seq;
    private long bytes;
    private long forgotten;

    ConsoleFeed(int maxEntries, long maxBytes) {
        this(maxEntries, maxBytes, false);
    }

    /** A feed whose entries are kept by producer and id when {@code perProducer}, else by id alone. */
    ConsoleFeed(int maxEntries, long maxBytes, boolean perProducer) {
        this.maxEntries = Math.max(1, maxEntries);
        this.maxBytes = maxBytes;
        this.perProducer = perProducer;
    }

    /** The key of a request of {@code producer} (null: none named) with {@code requestId}. */
    private String key(String producer, String requestId) {
        // Neither a producer nor an id holds a '/': no two producers' keys are the same.
        return perProducer ? (producer == null ? "" : producer) + "/" + requestId : requestId;
    }

    private String key(ConsoleEntry entry) {
        return key(entry.producer(), entry.requestId());
    }

    /**
     * Takes {@code update} as the request's latest state, unless the request has ended already and {@code update} does
     * not end it (a late or redelivered {@code image.started}, a request sent again from the console): an ended
     * request stays ended. Returns whether it was taken.
     */
    synchronized boolean apply(ConsoleEntry update) {
        ConsoleEntry before = byId.get(key(update));
        if (before != null) {
            if (ConsoleEntry.terminal(before.state()) && !ConsoleEntry.terminal(update.state())) {
                return false;
            }
            remove(before);
        }
        ConsoleEntry numbered = (before == null ? update : update.over(before)).numbered(++seq);
        byId.put(key(numbered), numbered);
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
        byId.remove(key(entry));
        bySeq.remove(entry.seq());
        producers.computeIfPresent(producerOf(entry), (name, count) -> count > 1 ? count - 1 : null);
        bytes -= entry.bytes();
    }

    private static String producerOf(ConsoleEntry entry) {
        return entry.producer() == null ? "default" : entry.producer();
    }

    /** The entry of {@code requestId} (of no producer named, when kept by producer), if kept. */
    synchronized Optional<ConsoleEntry> find(String requestId) {
        return find(null, requestId);
    }

    /**
     * The entry of {@code requestId} of {@code producer}, if kept; with entries kept by id alone, {@code producer} is
     * not looked at (the caller checks the entry's).
     */
    synchronized Optional<ConsoleEntry> find(String producer, String requestId) {
        return Optional.ofNullable(byId.get(key(producer, requestId)));
    }

    /** The entries changed after {@code after}, oldest change first, at most {@code limit}. */
    synchronized List<ConsoleEntry> since(long after, int limit) {
        return since(after, limit, entry -> true).entries();
    }

    /**
     * Of the next {@code limit} entries changed after {@code after}, oldest change first, those {@code filter} takes,
     * and the number of the last change looked at ({@code after} when none is), to ask after next.
     */
    synchronized Batch since(long after, int limit, Predicate<ConsoleEntry> filter) {
        List<ConsoleEntry> changed = new ArrayList<>();
        long last = after;
        int looked = 0;
        for (ConsoleEntry entry : bySeq.tailMap(after, false).values()) {
            if (looked++ >= limit) {
                break;
            }
            last = entry.seq();
            if (filter.test(entry)) {
                changed.add(entry);
            }
        }
        return new Batch(changed, last);
    }

    /** The entries of {@link #since(long, int, Predicate)}, and the last change looked at. */
    record Batch(List<ConsoleEntry> entries, long last) {}

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
