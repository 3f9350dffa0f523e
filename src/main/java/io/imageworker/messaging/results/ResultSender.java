package io.imageworker.messaging.results;

import io.imageworker.TerminalEvent;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.support.Patience;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import io.opentelemetry.api.trace.Span;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;

/**
 * Sends what a record ends in, made by {@link ResultPublisher}: its request's terminal event, or its DLQ copy when it is
 * not a readable request. By default in the results' transaction with the record's offset ({@link
 * ResultTransactions}, which then tells the record's end); with transactions off, one by one, tried again within the
 * infrastructure patience, the record's end told once it is acknowledged ({@link #acknowledged}). The {@code Uni}
 * completes once Kafka has the result.
 */
@ApplicationScoped
public class ResultSender {

    private final ResultPublisher publisher;
    private final ResultTransactions transactions;
    private final Patience patience;
    private final Tracing tracing;
    private final WorkerMetrics metrics;

    ResultSender(
            ResultPublisher publisher,
            ResultTransactions transactions,
            Patience patience,
            Tracing tracing,
            WorkerMetrics metrics) {
        this.publisher = publisher;
        this.transactions = transactions;
        this.patience = patience;
        this.tracing = tracing;
        this.metrics = metrics;
    }

    /** The request's terminal event, as a stage of its span. */
    public Uni<Void> publish(TerminalEvent result, RecordContext context, InFlight.Run run, Span span) {
        if (transactions.enabled()) {
            return tracing.stage(
                    "publish",
                    () -> transactions.publish(
                            result.requestId(), run, List.of(publisher.record(result, context, span)), null));
        }
        return tracing.stage("publish", () -> patience.retry(publisher.publish(result, context, span)));
    }

    /** The record's DLQ copy, with the reason it is not a readable request. */
    public Uni<Void> deadLetter(byte[] value, RecordContext context, InFlight.Run run, String reason) {
        Log.warnf("Record %s is not a readable request (%s); sending it to the DLQ", context.position(), reason);
        metrics.deadLettered();
        if (transactions.enabled()) {
            return tracing.stage(
                    "dead letter",
                    () -> transactions.publish(
                            context.position(),
                            run,
                            List.of(publisher.deadLetterRecord(value, context, reason, false)),
                            () -> List.of(publisher.deadLetterRecord(value, context, reason, true))));
        }
        return tracing.stage("dead letter", () -> patience.retry(publisher.deadLetter(value, context, reason)));
    }

    /**
     * The record of {@code run}, whose result {@link #publish} or {@link #deadLetter} sent, was acknowledged: its end
     * is told here when no transaction told it. In a transaction its end was told with the commit of its result,
     * before the sending completed ({@link ResultTransactions#publish}), so that it is told once, by one writer.
     */
    public void acknowledged(InFlight.Run run) {
        if (!transactions.enabled()) {
            run.ended(true);
        }
    }

    /**
     * Why no result of request {@code requestId} can carry what its record gives it (its key or its {@code
     * tracestate} leaves no room for the event in a Kafka record), or null: such a request is refused before any call,
     * its result published with what fits ({@link ResultEnvelope}).
     */
    public String unpublishable(String requestId, RecordContext context, Span span) {
        return publisher.envelope(context, requestId, span).cut();
    }

    /** {@code work}, whose gateway calls are published as {@code image.started} ({@link ResultPublisher#tellingStarts}). */
    public <T> Uni<T> tellingStarts(String requestId, RecordContext context, Span span, Uni<T> work) {
        return publisher.tellingStarts(requestId, context, span, work);
    }
}
