package io.imageworker.support;

import io.micrometer.core.instrument.MeterRegistry;

/** {@link WorkerMetrics} outside Quarkus, for unit tests. */
public final class TestMetrics {

    private TestMetrics() {}

    /** The worker's metrics, registered in {@code registry}. */
    public static WorkerMetrics of(MeterRegistry registry) {
        return new WorkerMetrics(registry);
    }
}
