package io.imageworker.messaging.results;

import io.imageworker.support.Patience;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * The choice of the result sink, made once when it is first needed at start-up: the one place that asks whether
 * results go out in transactions ({@code IMAGE_WORKER_TRANSACTIONS_ENABLED}). With transactions off, {@link
 * ResultTransactions} is never made.
 */
@Singleton
class ResultSinks {

    @Produces
    @ApplicationScoped
    ResultSink sink(
            TransactionSettings config,
            ResultTransactions transactions,
            ResultPublisher publisher,
            Patience patience,
            Tracing tracing,
            WorkerMetrics metrics) {
        return config.enabled()
                ? new TransactionalSink(transactions, publisher, tracing, metrics)
                : new AcknowledgedSink(publisher, patience, tracing, metrics);
    }
}
