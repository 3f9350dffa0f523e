package io.imageworker.testing;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Spans kept in memory, for tests: Quarkus exports to every {@code SpanExporter} bean. Only a worker whose test
 * profile turns the SDK on ({@code quarkus.otel.sdk.disabled=false}) records any.
 */
@ApplicationScoped
public class InMemorySpans {

    @Produces
    @Singleton
    InMemorySpanExporter exporter() {
        return InMemorySpanExporter.create();
    }
}
