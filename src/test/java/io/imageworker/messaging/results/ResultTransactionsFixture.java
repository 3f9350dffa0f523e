package io.imageworker.messaging.results;

import io.imageworker.config.WorkerConfig;
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

    /** The transactions of {@code config} over {@code work}, with no Kafka settings. */
    public static ResultTransactions of(WorkerConfig config, PartitionWork work) {
        WorkerThreads threads = new WorkerThreads();
        return new ResultTransactions(
                Map.of(),
                config,
                TestConfig.settings(RetrySettings.class),
                work,
                new CpuWork(threads, 1, 1),
                threads,
                new SimpleMeterRegistry());
    }

    /**
     * The result sink {@code config} chooses ({@link ResultSinks}), its transactions over {@code work}; it publishes
     * nothing (no publisher), but ends records, parks with transactions on, and commits offsets.
     */
    public static ResultSink sink(WorkerConfig config, PartitionWork work) {
        return new ResultSinks().sink(config, of(config, work), null, null, null, null);
    }
}
