package io.imageworker.spend;

import io.smallrye.mutiny.Uni;
import java.util.Optional;

/**
 * Where the spend guard's claims are written and read back, in one order for every replica that shares the budget
 * (on Kafka: {@code messaging.sidetopics.KafkaBudgetLog}, the bean the guard uses); each replica judges them with its own {@link
 * BudgetLedger}, and they all agree. Each claim counts against one scope: the fleet's cap ({@link BudgetLedger#FLEET},
 * null) or a producer's (contract v1.2, its name), each with windows of its own length.
 */
public interface BudgetLog {

    /** The counter of restarts of the log's reader (exported by the spend guard without a cap too, as 0). */
    String READER_RESTARTS = "image_worker_budget_reader_restarts";

    /** Its description. */
    String READER_RESTARTS_HELP =
            "Restarts of the spend guard's budget-log reader after a failure (it resumes where it stopped)";

    /** Begins to write and read the log; called once, by the spend guard, when a cap is set. */
    default void start() {}

    /**
     * Writes a claim of one place in {@code window} of {@code scope} under {@code limit}, and completes, once it is
     * read back in the log's order, with whether it was accepted; fails when the log cannot be written or read in time.
     * {@code claim} is the claim's id, {@link BudgetLedger#claimOf(String)} of a secret the caller keeps to release it.
     */
    Uni<Boolean> claim(String scope, String claim, long window, int limit);

    /**
     * Gives the place of the accepted claim whose secret is {@code secret} back (its call cannot have been billed): the
     * release names the claim {@link BudgetLedger#claimOf(String)} and shows the secret, which only the claim's writer
     * knows ({@link BudgetLedger}); written, not awaited.
     */
    void release(String scope, String secret, long window);

    /** Places held in {@code window} of {@code scope} as far as this replica has read the log. */
    int used(String scope, long window);

    /** A claim in the fleet's scope. */
    default Uni<Boolean> claim(String claim, long window, int limit) {
        return claim(BudgetLedger.FLEET, claim, window, limit);
    }

    /** A release in the fleet's scope. */
    default void release(String secret, long window) {
        release(BudgetLedger.FLEET, secret, window);
    }

    /** Places held in the fleet's {@code window}. */
    default int used(long window) {
        return used(BudgetLedger.FLEET, window);
    }

    /**
     * Why this replica cannot decide claims now (its reading of the log has failed or stalled), or empty while it
     * reads: claims written meanwhile wait, and are tried again when they time out.
     */
    Optional<String> stall();
}
