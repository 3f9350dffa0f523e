package io.imageworker.spend;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.spend.BudgetLedger.Entry;
import io.imageworker.spend.BudgetLedger.Kind;
import io.imageworker.spend.BudgetLedger.Verdict;
import org.junit.jupiter.api.Test;

/** The ledger's scopes (contract v1.2): the fleet's and each capped producer's count apart, window by window. */
class BudgetLedgerScopeTest {

    private final BudgetLedger ledger = new BudgetLedger();

    @Test
    void eachScopeCountsItsOwnPlacesAgainstItsOwnLimit() {
        assertThat(ledger.apply(new Entry(Kind.CLAIM, "a", "a1", 7, 1))).isEqualTo(Verdict.ACCEPTED);
        assertThat(ledger.apply(new Entry(Kind.CLAIM, "a", "a2", 7, 1))).isEqualTo(Verdict.REFUSED);
        assertThat(ledger.apply(new Entry(Kind.CLAIM, "b", "b1", 7, 1))).isEqualTo(Verdict.ACCEPTED);
        assertThat(ledger.apply(new Entry(Kind.CLAIM, "f1", 7, 1)))
                .as("the fleet's")
                .isEqualTo(Verdict.ACCEPTED);

        assertThat(ledger.used("a", 7)).isEqualTo(1);
        assertThat(ledger.used("b", 7)).isEqualTo(1);
        assertThat(ledger.used(7)).isEqualTo(1);
        assertThat(ledger.used(BudgetLedger.FLEET, 7)).isEqualTo(1);
        assertThat(ledger.used("a", 8)).isZero();
    }

    @Test
    void aReleaseGivesBackAPlaceOfItsOwnScopeOnly() {
        String same = BudgetLedger.claimOf("same");
        ledger.apply(new Entry(Kind.CLAIM, "a", same, 7, 5));
        ledger.apply(new Entry(Kind.CLAIM, same, 7, 5));

        assertThat(ledger.apply(Entry.release("b", "same", 7))).isEqualTo(Verdict.IGNORED);
        assertThat(ledger.apply(Entry.release("a", "same", 7))).isEqualTo(Verdict.RELEASED);
        assertThat(ledger.used("a", 7)).isZero();
        assertThat(ledger.used(7))
                .as("the fleet's place of the same claim stays")
                .isEqualTo(1);
    }

    @Test
    void windowsAreForgottenByEachScopesOwnReckoning() {
        ledger.apply(new Entry(Kind.CLAIM, "a", "a1", 3, 5));
        ledger.apply(new Entry(Kind.CLAIM, "f1", 100, 5));

        ledger.forgetBefore(scope -> scope == null ? 100 : 4);

        assertThat(ledger.used("a", 3)).isZero();
        assertThat(ledger.used(100)).isEqualTo(1);
    }
}
