package io.imageworker.messaging;

import io.imageworker.contract.Lane;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.messaging.results.RecordContext;
import io.imageworker.support.Tracing;
import io.opentelemetry.api.trace.Span;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.function.Function;

/**
 * A request's span: it continues the trace of the record's headers, names where the record came from and its lane,
 * is the parent of the spans of the request's stages, and ends with the request's work, with its outcome.
 */
@ApplicationScoped
class RequestSpans {

    private final Tracing tracing;

    RequestSpans(Tracing tracing) {
        this.tracing = tracing;
    }

    /** {@code work} of the record of {@code context}, within the span of its request, which it is given. */
    <T> Uni<T> around(RecordContext context, Lane lane, Function<Span, Uni<T>> work) {
        Span span = tracing.startRequest("image-request", name -> RecordContext.header(context.headers(), name));
        span.setAttribute("messaging.system", "kafka");
        span.setAttribute("messaging.destination.name", context.topic());
        span.setAttribute("messaging.kafka.partition", context.partition());
        span.setAttribute("messaging.kafka.offset", context.offset());
        span.setAttribute("image_worker.lane", lane.name());
        return tracing.within(span, work.apply(span)).onTermination().invoke((ok, failure, cancelled) -> {
            if (failure != null) {
                Tracing.failed(span, failure);
            }
            span.end();
        });
    }

    /** What the request's terminal event says, on its span. */
    static void describe(Span span, TerminalEvent event) {
        span.setAttribute("image_worker.request_id", event.requestId());
        span.setAttribute("image_worker.outcome", event.ceType());
        if (event instanceof TerminalEvent.Failed failed) {
            span.setAttribute("image_worker.error_code", failed.error().code().name());
        }
    }
}
