package io.imageworker.spend;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * What must hold however replicas interleave their claims and releases in the log: a window never holds more places
 * than its limit, and every replica judging the same log reaches the same verdicts. (Named {@code *Test} so that the
 * build's one test suffix picks it up.)
 */
class BudgetLedgerPropertiesTest {

    /** One step of one replica: a claim, or the release of the oldest place it holds; in window 0 or 1. */
    record Step(int replica, boolean claim, int window) {}

    /** A place a replica holds: its claim's secret, which releases it, and its window. */
    record Place(String secret, int window) {}

    @Provide
    Arbitrary<List<Step>> interleavings() {
        Arbitrary<Step> step = net.jqwik.api.Combinators.combine(
                        Arbitraries.integers().between(0, 4),
                        Arbitraries.integers().between(0, 3).map(n -> n > 0),
                        Arbitraries.integers().between(0, 1))
                .as(Step::new);
        return step.list().ofMinSize(1).ofMaxSize(200);
    }

    @Property(tries = 500)
    void aWindowNeverHoldsMoreThanItsLimitAndEveryReaderAgrees(
            @ForAll("interleavings") List<Step> steps, @ForAll @IntRange(min = 0, max = 12) int limit) {
        List<BudgetLedger.Entry> log = new ArrayList<>();
        Map<Integer, List<Place>> held = new HashMap<>();
        BudgetLedger writer = new BudgetLedger();
        List<BudgetLedger.Verdict> verdicts = new ArrayList<>();
        int sequence = 0;
        for (Step step : steps) {
            BudgetLedger.Entry entry;
            List<Place> mine = held.computeIfAbsent(step.replica(), r -> new ArrayList<>());
            Place claimed = null;
            if (step.claim() || mine.isEmpty()) {
                claimed = new Place(step.replica() + "-" + sequence++, step.window());
                entry = new BudgetLedger.Entry(
                        BudgetLedger.Kind.CLAIM, BudgetLedger.claimOf(claimed.secret()), step.window(), limit);
            } else {
                Place place = mine.remove(0);
                entry = BudgetLedger.Entry.release(BudgetLedger.FLEET, place.secret(), place.window());
            }
            BudgetLedger.Verdict verdict = writer.apply(entry);
            if (verdict == BudgetLedger.Verdict.ACCEPTED) {
                mine.add(claimed);
            }
            log.add(entry);
            verdicts.add(verdict);
            assertThat(writer.used(0)).isLessThanOrEqualTo(limit);
            assertThat(writer.used(1)).isLessThanOrEqualTo(limit);
        }
        int heldPlaces = held.values().stream().mapToInt(List::size).sum();
        assertThat(writer.used(0) + writer.used(1)).isEqualTo(heldPlaces);

        BudgetLedger reader = new BudgetLedger();
        assertThat(log.stream().map(reader::apply).toList()).isEqualTo(verdicts);
    }

    /**
     * One step: a replica ({@code actor} 0 to 2) claims (even {@code how}) or gives back its oldest place (odd: a call
     * refused before it could be billed); or the copier ({@code actor} 3 and 4) writes entry {@code pick} of the log as
     * it read it, changed as {@code how} says.
     */
    record Move(int actor, int how, int pick, int window) {}

    @Provide
    Arbitrary<List<Move>> moves() {
        Arbitrary<Move> move = net.jqwik.api.Combinators.combine(
                        Arbitraries.integers().between(0, 4),
                        Arbitraries.integers().between(0, 9),
                        Arbitraries.integers().between(0, 1_000),
                        Arbitraries.integers().between(0, 1))
                .as(Move::new);
        return move.list().ofMinSize(1).ofMaxSize(200);
    }

    /**
     * Issue 48: a writer that reads the log and writes back what it read (claims as releases, releases again, released
     * claims again, entries in the other window) never frees a place whose call was made: in each window, the places
     * the replicas hold and did not give back (their calls, which may have been billed) stay within the limit.
     */
    @Property(tries = 500)
    void aCopierOfTheLogNeverLetsTheCallsMadeExceedTheLimit(
            @ForAll("moves") List<Move> moves, @ForAll @IntRange(min = 0, max = 6) int limit) {
        BudgetLedger ledger = new BudgetLedger();
        List<BudgetLedger.Entry> log = new ArrayList<>();
        Map<Integer, List<Place>> calls = new HashMap<>();
        int sequence = 0;
        for (Move move : moves) {
            BudgetLedger.Entry entry;
            if (move.actor() < 3) {
                List<Place> mine = calls.computeIfAbsent(move.actor(), r -> new ArrayList<>());
                if (move.how() % 2 == 0 || mine.isEmpty()) {
                    Place place = new Place(move.actor() + "-" + sequence++, move.window());
                    entry = new BudgetLedger.Entry(
                            BudgetLedger.Kind.CLAIM, BudgetLedger.claimOf(place.secret()), move.window(), limit);
                    if (ledger.apply(entry) == BudgetLedger.Verdict.ACCEPTED) {
                        mine.add(place);
                    }
                } else {
                    Place place = mine.remove(0);
                    entry = BudgetLedger.Entry.release(BudgetLedger.FLEET, place.secret(), place.window());
                    assertThat(ledger.apply(entry)).isEqualTo(BudgetLedger.Verdict.RELEASED);
                }
            } else if (log.isEmpty()) {
                continue;
            } else {
                BudgetLedger.Entry seen = log.get(move.pick() % log.size());
                long other = 1 - seen.window();
                entry = switch (move.how() % 5) {
                    case 0 ->
                        new BudgetLedger.Entry(
                                BudgetLedger.Kind.RELEASE, seen.scope(), seen.claim(), seen.window(), 0, seen.secret());
                    case 1 ->
                        new BudgetLedger.Entry(
                                BudgetLedger.Kind.CLAIM, seen.scope(), seen.claim(), seen.window(), limit, null);
                    case 2 ->
                        new BudgetLedger.Entry(
                                BudgetLedger.Kind.RELEASE, seen.scope(), seen.claim(), seen.window(), 0, seen.claim());
                    case 3 ->
                        new BudgetLedger.Entry(
                                seen.kind(), seen.scope(), seen.claim(), other, seen.limit(), seen.secret());
                    default ->
                        new BudgetLedger.Entry(
                                seen.kind(), seen.scope(), seen.claim(), seen.window(), limit, seen.secret());
                };
                ledger.apply(entry);
            }
            log.add(entry);
            for (int window = 0; window < 2; window++) {
                int w = window;
                long made = calls.values().stream()
                        .flatMap(List::stream)
                        .filter(place -> place.window() == w)
                        .count();
                assertThat(made).as("calls made in window %d", w).isLessThanOrEqualTo(limit);
                assertThat(made).isLessThanOrEqualTo(ledger.used(w));
            }
        }
    }
}
