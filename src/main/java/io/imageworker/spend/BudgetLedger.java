package io.imageworker.spend;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.ToLongFunction;

/**
 * The spend guard's ledger: claims of one place each (one gateway call that may be billed) and their releases, judged
 * in the one order in which every replica reads them. A claim is accepted when its scope's window holds fewer
 * accepted, unreleased claims than the entry's limit (the reader's own cap: {@code messaging.sidetopics.KafkaBudgetLog} never
 * takes it from the record); a release gives back an accepted claim, and only when it shows the claim's secret. The
 * verdicts depend on nothing but the order of the entries, so replicas that read the same log reach the same verdicts
 * without talking to each other, and the accepted claims of a window never exceed its limit, however many replicas
 * claim at once.
 *
 * <p>Why a secret: whoever may write the log also reads it, so nothing a claim shows in plain text (its id, its
 * writer's name) can prove who may release it: a writer that copied a claim as a release would free the place of a
 * call that was made, and every copy would let one more call through. A claim's id is therefore the SHA-256 of a
 * secret its writer drew and keeps ({@link #claimOf}); the writer alone can show the secret, and does so only in the
 * release of a call that cannot have been billed. Once shown, the secret frees nothing more: its claim holds no place,
 * and a copy of the claim written again takes a place of its own that the copied release then frees (one place taken
 * and given back: nothing spent).
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
     * @param claim the claim's id: the SHA-256 of its secret ({@link #claimOf}) for claims of this version
     * @param limit the places the scope's window has, by the cap of whoever judges
     * @param secret a release's proof that its writer wrote the claim: the secret whose {@link #claimOf} is {@code
     *     claim}; null for a claim (and for a release that has none, which then gives nothing back)
     */
    public record Entry(Kind kind, String scope, String claim, long window, int limit, String secret) {

        /** An entry without a secret: a claim (or a release that proves nothing). */
        public Entry(Kind kind, String scope, String claim, long window, int limit) {
            this(kind, scope, claim, window, limit, null);
        }

        /** An entry of the fleet's scope, without a secret. */
        public Entry(Kind kind, String claim, long window, int limit) {
            this(kind, FLEET, claim, window, limit);
        }

        /** The release of the claim of {@code secret} in {@code window} of {@code scope}, with its proof. */
        public static Entry release(String scope, String secret, long window) {
            return new Entry(Kind.RELEASE, scope, claimOf(secret), window, 0, secret);
        }

        /** The secret is never printed: whoever reads a log line could release the claim with it. */
        @Override
        public String toString() {
            return "Entry[" + kind + " " + claim + " of " + (scope == null ? "the fleet" : scope) + " in window "
                    + window + (secret == null ? "" : ", with its secret") + "]";
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
        /**
         * A release of a claim that holds a place, without the claim's secret (none, or another): not its writer's, so
         * the place stays taken.
         */
        FOREIGN
    }

    /** The random bytes of a secret {@link #newSecret()} draws: 128 bits. */
    private static final int SECRET_BYTES = 16;

    private static final SecureRandom RANDOM = new SecureRandom();

    /** A window of one scope. */
    private record Key(String scope, long window) {}

    /** The claims holding a place in each window; a window's set is made by its first claim. */
    private final Map<Key, Set<String>> places = new HashMap<>();

    /**
     * The id of the claim whose secret is {@code secret}: its SHA-256 in lower-case hexadecimal (64 characters). Who
     * reads the id cannot find the secret from it, so cannot release the claim.
     */
    public static String claimOf(String secret) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /** A new secret for a claim: 128 random bits from a {@link SecureRandom}, in hexadecimal. */
    public static String newSecret() {
        byte[] bytes = new byte[SECRET_BYTES];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** Applies the next entry of the log. */
    public synchronized Verdict apply(Entry entry) {
        Key key = new Key(entry.scope(), entry.window());
        if (entry.kind() == Kind.RELEASE) {
            Set<String> held = places.get(key);
            if (held == null || !held.contains(entry.claim())) {
                return Verdict.IGNORED;
            }
            if (entry.secret() == null || !claimOf(entry.secret()).equals(entry.claim())) {
                return Verdict.FOREIGN;
            }
            held.remove(entry.claim());
            return Verdict.RELEASED;
        }
        Set<String> held = places.computeIfAbsent(key, k -> new HashSet<>());
        if (held.contains(entry.claim())) {
            return Verdict.ACCEPTED;
        }
        if (held.size() < entry.limit()) {
            held.add(entry.claim());
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
        Set<String> held = places.get(new Key(scope, window));
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
