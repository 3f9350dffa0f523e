package io.imageworker.messaging.sidetopics;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Exports {@code image_worker_side_topic_records_skipped_total} for every side topic and reason at start, as 0: the
 * budget log's reader runs only when a cap is set and the cancel topic's only when it is named, but every worker must
 * export the series that the alert and the dashboard read.
 */
@ApplicationScoped
@Startup
public class SideTopicMetrics {

    /** The {@code topic} label of the budget log. */
    static final String BUDGET = "budget";
    /** The {@code topic} label of the cancel topic. */
    static final String CANCEL = "cancel";

    SideTopicMetrics(MeterRegistry registry) {
        for (SkippedRecords.Reason reason : SkippedRecords.BUDGET) {
            SkippedRecords.register(registry, BUDGET, reason);
        }
        for (SkippedRecords.Reason reason : SkippedRecords.CANCEL) {
            SkippedRecords.register(registry, CANCEL, reason);
        }
    }
}
