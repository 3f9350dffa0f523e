package io.imageworker.spend;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.ToLongFunction;

/**
 * The spend guard's ledger: claims of one place each (one gateway call that may be billed) and their releases, judged
 * in the one order in which every replica reads them. A claim is accepted when its scope's window holds fewer
 * accepted, unreleased claims than the entry's limit (the reader's own cap: {@code messaging.sidetopics.KafkaBudgetLog} never
 * takes it from the record); a release gives back an accepted claim, and only one of the same writer. The verdicts
 * depend on nothing but the order of the entries, so replicas that read the same log reach the same verdicts without
 * talking to each other, and the accepted claims of a window never exceed its limit, however many replicas claim at
 * once.
 *
 * <p>Each scope counts apart: the fleet's ({@link #FLEET}, the scope of entries that name none, as every entry written
 * before per-producer caps did) and one per capped producer (contract v1.2, its name), each with windows of its own
 * length.
 */
public final class BudgetLedger {

    /** The scope of the fleet's cap: entries that name no scope. */
    public static final String FLEET = null;

    /**
     * One entry of the log.
     *
     * @param scope the cap it counts against: {@link #FLEET} (null) or a producer's name
     * @param limit the places the scope's window has, by the cap of whoever judges
     * @param writer who wrote it (a replica's id; null for a ledger of one writer): a release gives back only a claim
     *     of its own writer
     */
    public record Entry(Kind kind, String scope, String claim, long window, int limit, String writer) {

        /** An entry of one writer. */
        public Entry(Kind kind, String scope, String claim, long window, int limit) {
            this(kind, scope, claim, window, limit, null);
        }

        /** An entry of the fleet's scope, of one writer. */
        public Entry(Kind kind, String claim, long window, int limit) {
            this(kind, FLEET, claim, window, limit);
        }
    }

    /** What an entry does. */
    public enum Kind {
        /** Asks for one place in a window. */
        CLAIM,
        /** Gives an accepted claim's place back: the call it was for cannot have been billed. */
        RELEASE
    }

    /** What the ledger made of an entry. */
    public enum Verdict {
        ACCEPTED,
        REFUSED,
        RELEASED,
        /** A release of a claim that holds no place (refused, released already, or of a forgotten window). */
        IGNORED,
        /** A release of a claim that holds a place for another writer: the place stays taken. */
        FOREIGN
    }

    /** A window of one scope. */
    private record Key(String scope, long window) {}

    /** The claims holding a place in each window, with their writers; a window's map is made by its first claim. */
    private final Map<Key, Map<String, String>> places = new HashMap<>();

    /** Applies the next entry of the log. */
    public synchronized Verdict apply(Entry entry) {
        Key key = new Key(entry.scope(), entry.window());
        if (entry.kind() == Kind.RELEASE) {
            Map<String, String> held = places.get(key);
            if (held == null || !held.containsKey(entry.claim())) {
                return Verdict.IGNORED;
            }
            if (!Objects.equals(held.get(entry.claim()), entry.writer())) {
                return Verdict.FOREIGN;
            }
            held.remove(entry.claim());
            return Verdict.RELEASED;
        }
        Map<String, String> held = places.computeIfAbsent(key, k -> new HashMap<>());
        if (held.containsKey(entry.claim())) {
            return Verdict.ACCEPTED;
        }
        if (held.size() < entry.limit()) {
            held.put(entry.claim(), entry.writer());
            return Verdict.ACCEPTED;
        }
        return Verdict.REFUSED;
    }

    /** Places held in the fleet's {@code window}: accepted claims not released. */
    public int used(long window) {
        return used(FLEET, window);
    }

    /** Places held in {@code window} of {@code scope}: accepted claims not released. */
    public synchronized int used(String scope, long window) {
        Map<String, String> held = places.get(new Key(scope, window));
        return held == null ? 0 : held.size();
    }

    /** Forgets the fleet's windows before {@code window}, and every other scope's too. */
    public void forgetBefore(long window) {
        forgetBefore(scope -> window);
    }

    /** Forgets, in each scope, the windows before {@code firstKept} of that scope: no claim for them is judged any more. */
    public synchronized void forgetBefore(ToLongFunction<String> firstKept) {
        places.keySet().removeIf(key -> key.window() < firstKept.applyAsLong(key.scope()));
    }

    @Override
    public synchronized String toString() {
        return Objects.toString(places);
    }
}
