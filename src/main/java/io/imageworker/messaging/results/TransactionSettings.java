package io.imageworker.messaging.results;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * How results are published ({@code image-worker.transactions.*}, {@code IMAGE_WORKER_TRANSACTIONS_*}): exactly one
 * visible result per request, the terminal events (and DLQ copies) of finished requests published with the offsets
 * they complete, finished-above metadata included, in one Kafka transaction, a batch at a time ({@link
 * ResultTransactions}); or, off, one by one. Read by {@link ResultSinks}, which chooses the sink at start-up, and by
 * the transactions themselves.
 */
@ConfigMapping(prefix = "image-worker.transactions")
public interface TransactionSettings {
    /**
     * On by default; off ({@code IMAGE_WORKER_TRANSACTIONS_ENABLED=false}) for brokers that do not allow
     * transactions: results are then published one by one and offsets committed every second (at least once).
     */
    @WithDefault("true")
    boolean enabled();

    /** How long a batch waits for more results before its transaction is committed. */
    @WithDefault("20ms")
    Duration linger();

    /** The most results in one transaction. */
    @WithDefault("200")
    int maxBatch();

    /**
     * How long a batch waits for more parked records ({@code messaging.parking.RequestParking}) when no result
     * waits: parks come by the thousand and cost nothing but a Kafka write, so they are batched for longer than
     * results, which a producer waits for.
     */
    @WithDefault("50ms")
    Duration parkLinger();

    /**
     * The most parked records in one transaction (beside at most {@link #maxBatch()} results): a transaction costs
     * about the same for 200 records as for a thousand, so parking at {@code max-batch} a transaction held a
     * backlog's parking to a few thousand records a second. Not much more than a thousand: a park holds its
     * record's bytes in the read-ahead's bound until its transaction commits, and at the bound the source
     * partitions' fetch pauses; smaller transactions let the next records be read while one commits.
     */
    @WithDefault("1000")
    int parkMaxBatch();

    /**
     * Kafka's {@code transaction.timeout.ms}: a worker killed in the middle of a transaction leaves it open this
     * long before the broker aborts it, and {@code read_committed} consumers of its partitions wait that long (so
     * does the partitions' next owner, to read their committed offsets).
     */
    @WithDefault("10s")
    Duration timeout();
}
