package io.imageworker.support;

import io.imageworker.contract.Billing.CallCost;
import io.imageworker.contract.TerminalEvent;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The worker's counters and timers, in Prometheus format at {@code /q/metrics}. Tags are bounded: outcome, error
 * code, call cost, never a request id. Gauges are registered by the component whose state they read.
 */
@ApplicationScoped
public class WorkerMetrics {

    private final MeterRegistry registry;
    /** The lowest bound of the gateway calls' histogram: no image comes faster. */
    static final Duration FASTEST_CALL = Duration.ofMillis(100);
    /** The highest bound of the gateway calls' histogram: above the longest gateway timeout a deployment sets. */
    static final Duration SLOWEST_CALL = Duration.ofMinutes(5);

    private final Timer gatewayLatency;
    private final Counter bytesStored;
    private final Counter sizeMismatches;
    private final Counter deadLetters;
    private final Counter staleConnections;

    /** Public for the tests of the classes that count through it, in their own packages. */
    public WorkerMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.gatewayLatency = Timer.builder("image_worker_gateway_call")
                .description("Duration of gateway calls")
                .publishPercentileHistogram()
                .minimumExpectedValue(FASTEST_CALL)
                .maximumExpectedValue(SLOWEST_CALL)
                .register(registry);
        this.bytesStored = counter(registry, "image_worker_stored_bytes", "Bytes of images written to the store");
        this.sizeMismatches = counter(
                registry,
                "image_worker_size_mismatches",
                "Images whose real size differs from the size sent (a silent gateway failure)");
        this.deadLetters = counter(
                registry,
                "image_worker_dead_letters",
                "Records sent to the DLQ because they are not a readable request");
        this.staleConnections = counter(
                registry,
                "image_worker_gateway_stale_connection_retries",
                "Calls sent again because the keep-alive connection they went out on was already closed by the"
                        + " gateway (never read by it, not billed)");
    }

    /** A counter with its description, as every counter of the worker is registered. */
    public static Counter counter(MeterRegistry registry, String name, String description) {
        return Counter.builder(name).description(description).register(registry);
    }

    /**
     * A gauge of {@code value} read from {@code object}, with its description, to be given a unit if it has one and
     * registered. Its object is held by a strong reference: Micrometer holds a gauge's object weakly by default, and a
     * gauge whose object is collected disappears from the export (seen in MetricsExportTest), so that an alert on it
     * would never fire.
     */
    public static <T> Gauge.Builder<T> gauge(String name, T object, ToDoubleFunction<T> value, String description) {
        return Gauge.builder(name, object, value).description(description).strongReference(true);
    }

    /** A request ended with this event. */
    public void ended(TerminalEvent event) {
        String code = event instanceof TerminalEvent.Failed failed
                ? failed.error().code().name()
                : "none";
        String outcome = event instanceof TerminalEvent.Completed ? "completed" : "failed";
        registry.counter("image_worker_requests", "outcome", outcome, "code", code)
                .increment();
    }

    /** A request was answered from its result document, with no gateway call. */
    public void replayed() {
        registry.counter("image_worker_requests_replayed").increment();
    }

    /** One gateway call ended, after {@code latencyMs}, costing {@code cost}. */
    public void gatewayCall(CallCost cost, long latencyMs) {
        registry.counter("image_worker_gateway_calls", "cost", cost.name().toLowerCase(Locale.ROOT))
                .increment();
        gatewayLatency.record(Duration.ofMillis(latencyMs));
    }

    /** A call went out on a keep-alive connection the gateway had already closed, and is sent again. */
    public void staleConnection() {
        staleConnections.increment();
    }

    /** An image of {@code bytes} was stored. */
    public void stored(long bytes) {
        bytesStored.increment(bytes);
    }

    /** The gateway returned another size than it was sent. */
    public void sizeMismatch() {
        sizeMismatches.increment();
    }

    /** A record went to the DLQ. */
    public void deadLettered() {
        deadLetters.increment();
    }
}
