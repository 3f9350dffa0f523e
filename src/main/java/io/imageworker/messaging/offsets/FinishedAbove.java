package io.imageworker.messaging.offsets;

import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * The records of a partition that were finished above its committed offset, written in the commit's metadata so that
 * the partition's next owner does not do them again.
 *
 * <p>Kafka keeps one offset per partition and requests finish out of order: when a worker gives a partition up (a
 * graceful shutdown, a rebalance), the offset it commits stops at the first request it did not finish, and every
 * request after that one which it did finish, stored and published would be read again by the next owner, which would
 * find its result in the ledger and publish its event a second time. So the commit carries them too, as Confluent's
 * Parallel Consumer does: {@code iw1:} then the distances from the committed offset, as single numbers or ranges
 * ({@code iw1:1,3-7,12}). The next owner acknowledges those records without doing them.
 *
 * <p>Kafka bounds the metadata ({@code offset.metadata.max.bytes}, 4096 by default): the text stops at {@link
 * #MAX_LENGTH} characters, keeping the offsets nearest the committed one; those left out would be done again, as
 * without the metadata, so the worker takes no record further than {@link #WINDOW} above a partition's committable
 * offset, and nothing is left out. Metadata this worker did not write (SmallRye's own commits write none) reads as nothing finished.
 */
final class FinishedAbove {

    /** What precedes the offsets: the format's name and version. */
    static final String PREFIX = "iw1:";

    /** At most this many characters, below Kafka's default {@code offset.metadata.max.bytes} of 4096. */
    static final int MAX_LENGTH = 3_000;

    /**
     * How far above its committed offset a partition's records may be taken ({@link PartitionWork#within}): the
     * finished-above metadata of records within it always fits in {@link #MAX_LENGTH}, whatever the pattern (distances
     * below 1000 have at most three digits: every other offset finished is 500 entries of 4 characters, two of every
     * three 333 ranges of 8), so no record finished here is ever done again by the partition's next owner.
     */
    static final int WINDOW = 1_000;

    /** At most this many offsets are read back: more are done again rather than held in memory. */
    static final int MAX_OFFSETS = 100_000;

    private FinishedAbove() {}

    /**
     * The metadata of a commit at {@code committed}.
     *
     * @param finished offsets finished and acknowledged; those not above {@code committed} are ignored
     * @return the metadata, empty when nothing above {@code committed} was finished
     */
    static String encode(long committed, NavigableSet<Long> finished) {
        StringBuilder text = new StringBuilder(PREFIX);
        long first = -1;
        long last = -1;
        for (long offset : finished.tailSet(committed, false)) {
            if (first >= 0 && offset == last + 1) {
                last = offset;
                continue;
            }
            if (first >= 0 && !append(text, committed, first, last)) {
                return finish(text);
            }
            first = offset;
            last = offset;
        }
        if (first >= 0) {
            append(text, committed, first, last);
        }
        return finish(text);
    }

    private static boolean append(StringBuilder text, long committed, long first, long last) {
        String range =
                first == last ? Long.toString(first - committed) : (first - committed) + "-" + (last - committed);
        int separator = text.length() > PREFIX.length() ? 1 : 0;
        if (text.length() + separator + range.length() > MAX_LENGTH) {
            return false;
        }
        if (separator > 0) {
            text.append(',');
        }
        text.append(range);
        return true;
    }

    private static String finish(StringBuilder text) {
        return text.length() > PREFIX.length() ? text.toString() : "";
    }

    /**
     * The offsets a commit at {@code committed} says were finished above it.
     *
     * @return those offsets; empty when the metadata is absent, not this format or malformed (nothing is skipped)
     */
    static NavigableSet<Long> decode(long committed, String metadata) {
        TreeSet<Long> finished = new TreeSet<>();
        if (metadata == null || !metadata.startsWith(PREFIX) || metadata.length() > 2 * MAX_LENGTH) {
            return finished;
        }
        try {
            for (String range : metadata.substring(PREFIX.length()).split(",", -1)) {
                int dash = range.indexOf('-');
                long first = Long.parseLong(dash < 0 ? range : range.substring(0, dash));
                long last = dash < 0 ? first : Long.parseLong(range.substring(dash + 1));
                if (first < 1 || last < first) {
                    return new TreeSet<>();
                }
                for (long distance = first; distance <= last && finished.size() < MAX_OFFSETS; distance++) {
                    finished.add(committed + distance);
                }
            }
        } catch (NumberFormatException e) {
            return new TreeSet<>();
        }
        return finished;
    }
}
