package io.imageworker.messaging.results;

import io.imageworker.contract.TerminalEvent;
import io.imageworker.messaging.offsets.ConsumerCommits;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.support.Patience;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import io.opentelemetry.api.trace.Span;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The result sink for brokers without transactions ({@code IMAGE_WORKER_TRANSACTIONS_ENABLED=false}, {@link
 * ResultSink}): at least once. Each result is published on its own, tried again within the infrastructure patience;
 * its record's end is told once the record is acknowledged, and the consumer commits the offsets ({@link
 * ConsumerCommits}: the commit strategy every second, a rebalance's last commit by {@code commitSync}). Nothing is
 * parked: a copy and its offset could not be committed as one.
 */
final class AcknowledgedSink implements ResultSink {

    private final ResultPublisher publisher;
    private final Patience patience;
    private final Tracing tracing;
    private final WorkerMetrics metrics;
    private final ConsumerCommits commits = new ConsumerCommits();

    AcknowledgedSink(ResultPublisher publisher, Patience patience, Tracing tracing, WorkerMetrics metrics) {
        this.publisher = publisher;
        this.patience = patience;
        this.tracing = tracing;
        this.metrics = metrics;
    }

    @Override
    public Uni<Void> publish(TerminalEvent result, RecordContext context, InFlight.Run run, Span span) {
        return tracing.stage("publish", () -> patience.retry(publisher.publish(result, context, span)));
    }

    @Override
    public Uni<Void> deadLetter(byte[] value, RecordContext context, InFlight.Run run, String reason) {
        Log.warnf("Record %s is not a readable request (%s); sending it to the DLQ", context.position(), reason);
        metrics.deadLettered();
        return tracing.stage("dead letter", () -> patience.retry(publisher.deadLetter(value, context, reason)));
    }

    @Override
    public Optional<Parker> parker() {
        return Optional.empty();
    }

    /** Its end is told here, once the record is acknowledged: no transaction tells it. */
    @Override
    public Uni<Void> acknowledge(Message<?> message, InFlight.Run run) {
        return Uni.createFrom().completionStage(message.ack()).invoke(() -> run.end(InFlight.Outcome.ACKNOWLEDGED));
    }

    @Override
    public void rebalanced(Consumer<?, ?> consumer) {
        commits.rebalanced(consumer);
    }

    @Override
    public void commitReleased(Consumer<?, ?> consumer, Map<TopicPartition, OffsetAndMetadata> offsets, Duration wait) {
        commits.commitReleased(consumer, offsets, wait);
    }

    @Override
    public Uni<Void> periodic(Supplier<Uni<Void>> commit) {
        return commits.periodic(commit);
    }
}
