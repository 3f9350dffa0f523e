package io.imageworker.messaging.results;

import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/** The counters of the results' transactions, shared by the transactions of every request topic. */
final class TransactionMetrics {

    private final Counter committed;
    private final Counter failedTries;
    private final Counter inDoubtCommitted;
    private final Counter inDoubtNot;

    TransactionMetrics(MeterRegistry registry) {
        this.committed = WorkerMetrics.counter(
                registry,
                "image_worker_transactions_committed",
                "Transactions committed with the results of finished requests and their offsets");
        this.failedTries = WorkerMetrics.counter(
                registry,
                "image_worker_transactions_failed",
                "Tries of a transaction of results that failed (tried again within the infrastructure patience)");
        this.inDoubtCommitted = inDoubt(registry, "committed");
        this.inDoubtNot = inDoubt(registry, "not_committed");
    }

    private static Counter inDoubt(MeterRegistry registry, String settled) {
        return Counter.builder("image_worker_transactions_in_doubt")
                .description("Commits of results that failed without saying whether they went through, by what the"
                        + " committed offsets said (never published again when they had)")
                .tag("settled", settled)
                .register(registry);
    }

    /** A transaction of results was committed. */
    void committed() {
        committed.increment();
    }

    /** A try of a transaction of results failed. */
    void failedTry() {
        failedTries.increment();
    }

    /** A commit in doubt was settled: it had gone through, or not. */
    void settled(boolean wentThrough) {
        (wentThrough ? inDoubtCommitted : inDoubtNot).increment();
    }
}
