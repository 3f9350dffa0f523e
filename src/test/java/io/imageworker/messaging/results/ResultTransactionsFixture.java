package io.imageworker.messaging.results;

import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.support.CpuWork;
import io.imageworker.support.RetrySettings;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;

/** {@link ResultTransactions} and the {@link ResultSink} for tests of other packages: no broker is asked for anything until a transaction. */
public final class ResultTransactionsFixture {

    private ResultTransactionsFixture() {}

    /** The transactions of the settings {@code settings} over {@code work}, with no Kafka settings. */
    public static ResultTransactions of(Map<String, String> settings, PartitionWork work) {
        WorkerThreads threads = new WorkerThreads();
        return new ResultTransactions(
                Map.of(),
                TestConfig.settings(TransactionSettings.class, settings),
                TestConfig.settings(RetrySettings.class, settings),
                work,
                new CpuWork(threads, 1, 1),
                threads,
                new SimpleMeterRegistry());
    }

    /**
     * The result sink the settings {@code settings} choose ({@link ResultSinks}), its transactions over {@code work}; it publishes
     * nothing (no publisher), but ends records, parks with transactions on, and commits offsets.
     */
    public static ResultSink sink(Map<String, String> settings, PartitionWork work) {
        return new ResultSinks()
                .sink(
                        TestConfig.settings(TransactionSettings.class, settings),
                        of(settings, work),
                        null,
                        null,
                        null,
                        null);
    }
}
