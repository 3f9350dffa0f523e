package io.imageworker.messaging.results;

import io.imageworker.contract.TerminalEvent;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import io.opentelemetry.api.trace.Span;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The default result sink ({@link ResultSink}): exactly one visible terminal event per request. Each result goes out
 * in its request topic's next Kafka transaction with the offsets it completes ({@link ResultTransactions}); the
 * transaction tells the record's end as it commits, before the result's {@code Uni} completes, so the acknowledgement
 * tells nothing more. The transactions commit the offsets, a rebalance's last commit included, under the group
 * metadata of the last rebalance; the commit strategy's periodic commits are dropped. Records may be parked, their
 * copies committed with their offsets in the same transactions.
 */
final class TransactionalSink implements ResultSink {

    private final ResultTransactions transactions;
    private final ResultPublisher publisher;
    private final Tracing tracing;
    private final WorkerMetrics metrics;

    TransactionalSink(
            ResultTransactions transactions, ResultPublisher publisher, Tracing tracing, WorkerMetrics metrics) {
        this.transactions = transactions;
        this.publisher = publisher;
        this.tracing = tracing;
        this.metrics = metrics;
    }

    @Override
    public Uni<Void> publish(TerminalEvent result, RecordContext context, InFlight.Run run, Span span) {
        return tracing.stage(
                "publish",
                () -> transactions.publish(
                        result.requestId(), run, List.of(publisher.record(result, context, span)), null));
    }

    @Override
    public Uni<Void> deadLetter(byte[] value, RecordContext context, InFlight.Run run, String reason) {
        Log.warnf("Record %s is not a readable request (%s); sending it to the DLQ", context.position(), reason);
        metrics.deadLettered();
        return tracing.stage(
                "dead letter",
                () -> transactions.publish(
                        context.position(),
                        run,
                        List.of(publisher.deadLetterRecord(value, context, reason, false)),
                        () -> List.of(publisher.deadLetterRecord(value, context, reason, true))));
    }

    @Override
    public Optional<Parker> parker() {
        return Optional.of(transactions::park);
    }

    /** Its end was told with the commit of its result, before the sending completed: told once, by one writer. */
    @Override
    public Uni<Void> acknowledge(Message<?> message, InFlight.Run run) {
        return Uni.createFrom().completionStage(message.ack());
    }

    /** The transactions take the group metadata: the generation their offsets are committed under. */
    @Override
    public void rebalanced(Consumer<?, ?> consumer) {
        try {
            var metadata = consumer.groupMetadata();
            for (String topic : consumer.subscription()) {
                transactions.groupOf(topic, metadata);
            }
        } catch (RuntimeException e) {
            Log.warnf("Rebalance: could not read the group metadata (%s)", e.toString());
        }
    }

    @Override
    public void commitReleased(Consumer<?, ?> consumer, Map<TopicPartition, OffsetAndMetadata> offsets, Duration wait) {
        transactions.commitReleased(offsets, wait);
    }

    @Override
    public Uni<Void> periodic(Supplier<Uni<Void>> commit) {
        return Uni.createFrom().voidItem();
    }
}
