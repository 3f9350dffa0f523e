package io.imageworker.support;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Spans of one request and its stages (OpenTelemetry): a span per record continuing the producer's
 * {@code traceparent}, and a child span per stage (validation, each reference, each gateway attempt, taking the image,
 * storing it, the ledger, the publish). A request's work hops between event loops, the CPU pool and the store
 * client's threads, so the request's span travels in Mutiny's subscriber context ({@link #within}), not in a
 * thread-local: a stage finds its parent there wherever it runs.
 *
 * <p>With the SDK off (the default: {@code QUARKUS_OTEL_SDK_DISABLED=false} turns it on) every span is a no-op that
 * costs a few allocations.
 */
@ApplicationScoped
public class Tracing {

    private static final String REQUEST_SPAN = "image-worker.request-span";
    private static final TextMapGetter<Function<String, String>> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Function<String, String> carrier) {
            return List.of("traceparent", "tracestate");
        }

        @Override
        public String get(Function<String, String> carrier, String key) {
            return carrier == null ? null : carrier.apply(key);
        }
    };

    private final Tracer tracer;

    /**
     * The worker's spans: made with Quarkus's {@code tracer} when the SDK is on, none recorded when it is off. With
     * {@code quarkus.otel.sdk.disabled=true} Quarkus still hands out an SDK tracer, without an exporter: each span was
     * recorded (ids, attributes, events) and then dropped, and the gateway got a {@code traceparent} of a trace that
     * goes nowhere. A heap histogram of the worker at concurrency 500 found about 7,000 such spans alive; with the
     * no-op tracer a span costs nothing and the results continue the producer's trace as they do for an unrecorded
     * span ({@link #traceparentFor}).
     */
    @Inject
    Tracing(Tracer tracer, @ConfigProperty(name = "quarkus.otel.sdk.disabled", defaultValue = "false") boolean sdkOff) {
        this(sdkOff ? OpenTelemetry.noop().getTracer("image-worker") : tracer);
    }

    /** Spans made with {@code tracer}. */
    public Tracing(Tracer tracer) {
        this.tracer = tracer;
    }

    /** A request's span, started now, continuing the trace whose headers {@code header} reads. */
    public Span startRequest(String name, Function<String, String> header) {
        Context producer = W3CTraceContextPropagator.getInstance().extract(Context.root(), header, HEADERS);
        return tracer.spanBuilder(name)
                .setParent(producer)
                .setSpanKind(SpanKind.CONSUMER)
                .startSpan();
    }

    /** {@code work}, with {@code span} as the parent of the spans of its stages, wherever they run. */
    public <T> Uni<T> within(Span span, Uni<T> work) {
        return work.withContext((uni, context) -> {
            context.put(REQUEST_SPAN, span);
            return uni;
        });
    }

    /** The request's span of the work being subscribed, in {@code use}. */
    public <T> Uni<T> withRequestSpan(Function<Span, Uni<T>> use) {
        return Uni.createFrom().context(context -> use.apply(context.getOrElse(REQUEST_SPAN, Span::getInvalid)));
    }

    /** {@code work} as a child span of the request's. */
    public <T> Uni<T> stage(String name, Supplier<Uni<T>> work) {
        return stage(name, work, (span, item) -> {});
    }

    /** {@code work} as a child span of the request's; {@code describe} adds what its outcome says. */
    public <T> Uni<T> stage(String name, Supplier<Uni<T>> work, BiConsumer<Span, T> describe) {
        return withRequestSpan(parent -> {
            Span span = child(parent, name);
            return work.get().onItemOrFailure().invoke((item, failure) -> {
                if (failure != null) {
                    failed(span, failure);
                } else {
                    describe.accept(span, item);
                }
                span.end();
            });
        });
    }

    /** A child span of {@code parent} started now, to be ended by the caller. */
    public Span child(Span parent, String name) {
        return tracer.spanBuilder(name)
                .setParent(Context.root().with(parent))
                .setSpanKind(SpanKind.INTERNAL)
                .startSpan();
    }

    /**
     * A child span of {@code parent} for an outgoing HTTP call ({@code CLIENT}, as OpenTelemetry's HTTP semantic
     * conventions name it), to be ended by the caller; its context goes out with the call ({@link #traceparentOf}).
     */
    public Span client(Span parent, String name) {
        return tracer.spanBuilder(name)
                .setParent(Context.root().with(parent))
                .setSpanKind(SpanKind.CLIENT)
                .startSpan();
    }

    /** The W3C {@code traceparent} naming {@code span}, or null when traces are not recorded. */
    public static String traceparentOf(Span span) {
        if (!span.isRecording() || !span.getSpanContext().isValid()) {
            return null;
        }
        var context = span.getSpanContext();
        return "00-" + context.getTraceId() + "-" + context.getSpanId() + "-"
                + context.getTraceFlags().asHex();
    }

    /**
     * The {@code traceparent} a result carries: this worker's request span when traces are recorded, so the result is
     * its child; otherwise the producer's trace continued with a span id of the result's own ({@link TraceContext}).
     * Null when the request carried no usable trace and none is recorded.
     */
    public static String traceparentFor(Span request, String producerTraceparent) {
        String own = traceparentOf(request);
        return own != null ? own : TraceContext.continueTrace(producerTraceparent);
    }

    /** Marks {@code span} as ended by {@code failure}. */
    public static void failed(Span span, Throwable failure) {
        span.recordException(failure);
        span.setStatus(StatusCode.ERROR, String.valueOf(failure.getMessage()));
    }
}
