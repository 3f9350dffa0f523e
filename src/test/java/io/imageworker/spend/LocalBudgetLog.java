package io.imageworker.spend;

import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A {@link BudgetLog} in memory, for unit tests: entries are judged in the order they are written, as each replica's
 * ledger judges the Kafka log; {@link #entries()} is that log.
 */
final class LocalBudgetLog implements BudgetLog {

    private final BudgetLedger ledger = new BudgetLedger();
    private final List<BudgetLedger.Entry> entries = new ArrayList<>();
    private volatile String stall;

    @Override
    public synchronized Uni<Boolean> claim(String scope, String claim, long window, int limit) {
        BudgetLedger.Entry entry = new BudgetLedger.Entry(BudgetLedger.Kind.CLAIM, scope, claim, window, limit);
        entries.add(entry);
        return Uni.createFrom().item(ledger.apply(entry) == BudgetLedger.Verdict.ACCEPTED);
    }

    @Override
    public synchronized void release(String scope, String secret, long window) {
        BudgetLedger.Entry entry = BudgetLedger.Entry.release(scope, secret, window);
        entries.add(entry);
        ledger.apply(entry);
    }

    @Override
    public int used(String scope, long window) {
        return ledger.used(scope, window);
    }

    @Override
    public Optional<String> stall() {
        return Optional.ofNullable(stall);
    }

    /** Reports {@code reason} as this log's stall from now on; {@code null} for none. */
    void stallWith(String reason) {
        stall = reason;
    }

    synchronized List<BudgetLedger.Entry> entries() {
        return List.copyOf(entries);
    }
}
