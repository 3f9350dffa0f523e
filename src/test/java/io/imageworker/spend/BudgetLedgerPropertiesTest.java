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
        Map<Integer, List<BudgetLedger.Entry>> held = new HashMap<>();
        BudgetLedger writer = new BudgetLedger();
        List<BudgetLedger.Verdict> verdicts = new ArrayList<>();
        int sequence = 0;
        for (Step step : steps) {
            BudgetLedger.Entry entry;
            List<BudgetLedger.Entry> mine = held.computeIfAbsent(step.replica(), r -> new ArrayList<>());
            if (step.claim() || mine.isEmpty()) {
                entry = new BudgetLedger.Entry(
                        BudgetLedger.Kind.CLAIM, step.replica() + "-" + sequence++, step.window(), limit);
            } else {
                BudgetLedger.Entry place = mine.remove(0);
                entry = new BudgetLedger.Entry(BudgetLedger.Kind.RELEASE, place.claim(), place.window(), 0);
            }
            BudgetLedger.Verdict verdict = writer.apply(entry);
            if (verdict == BudgetLedger.Verdict.ACCEPTED) {
                mine.add(entry);
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
}
