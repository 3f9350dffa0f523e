package io.imageworker.gateway;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The spend guard's ledger: claims of one place each (one gateway call that may be billed) and their releases, judged
 * in the one order in which every replica reads them. A claim is accepted when its window holds fewer accepted,
 * unreleased claims than the limit the claim carries; a release gives back an accepted claim. The verdicts depend on
 * nothing but the order of the entries, so replicas that read the same log reach the same verdicts without talking to
 * each other, and the accepted claims of a window never exceed its limit, however many replicas claim at once.
 */
public final class BudgetLedger {

    /** One entry of the log. */
    public record Entry(Kind kind, String claim, long window, int limit) {}

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
        IGNORED
    }

    private final Map<Long, Set<String>> placesByWindow = new HashMap<>();

    /** Applies the next entry of the log. */
    public synchronized Verdict apply(Entry entry) {
        Set<String> places = placesByWindow.computeIfAbsent(entry.window(), window -> new HashSet<>());
        if (entry.kind() == Kind.RELEASE) {
            return places.remove(entry.claim()) ? Verdict.RELEASED : Verdict.IGNORED;
        }
        if (places.contains(entry.claim())) {
            return Verdict.ACCEPTED;
        }
        if (places.size() < entry.limit()) {
            places.add(entry.claim());
            return Verdict.ACCEPTED;
        }
        return Verdict.REFUSED;
    }

    /** Places held in {@code window}: accepted claims not released. */
    public synchronized int used(long window) {
        Set<String> places = placesByWindow.get(window);
        return places == null ? 0 : places.size();
    }

    /** Forgets the windows before {@code window}: no claim for them is judged any more. */
    public synchronized void forgetBefore(long window) {
        placesByWindow.keySet().removeIf(w -> w < window);
    }
}
