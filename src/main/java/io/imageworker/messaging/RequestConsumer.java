package io.imageworker.messaging;

import io.imageworker.TerminalEvent;
import io.imageworker.config.StartupCheck;
import io.imageworker.config.WorkerConfig;
import io.imageworker.processing.Patience;
import io.imageworker.processing.RequestProcessor;
import io.imageworker.storage.ImageStore;
import io.quarkus.logging.Log;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Consumes {@code image-request}. The stream is merged with an explicit limit: at most {@code 2 x concurrency}
 * requests are in progress (gateway calls themselves are limited to {@code concurrency} by the limiter; the rest wait
 * for a retry, the store or Kafka without holding a call slot). When the merge is full it requests nothing more, the
 * Kafka connector's queue fills and the connector pauses polling: backpressure, never an unbounded buffer.
 *
 * <p>Each record is acknowledged only after its terminal event (or its DLQ copy) has been acknowledged by Kafka; the
 * throttled commit strategy then commits the highest offset below which everything is acknowledged, so requests
 * complete out of order and a crash at any moment loses nothing (at-least-once). A result that cannot be published
 * within the infrastructure patience is nacked, which fails the channel (failure-strategy {@code fail}): health goes
 * down and the record is redelivered after a restart, never committed as done.
 */
@ApplicationScoped
public class RequestConsumer {

    @Inject
    @Channel("requests")
    Multi<Message<byte[]>> requests;

    private final RecordReader reader;
    private final RequestProcessor processor;
    private final ResultPublisher publisher;
    private final Patience patience;
    private final ImageStore store;
    private final int parallelism;
    private volatile Cancellable subscription;

    RequestConsumer(
            RecordReader reader,
            RequestProcessor processor,
            ResultPublisher publisher,
            ImageStore store,
            WorkerConfig config) {
        this.store = store;
        this.reader = reader;
        this.processor = processor;
        this.publisher = publisher;
        this.patience = new Patience(config.retry().infrastructurePatience());
        this.parallelism = Math.max(1, config.concurrency()) * 2;
    }

    /** Subscribes once SmallRye has wired the channels (its own start-up observer runs at priority 1000). */
    void start(@Observes @Priority(2000) StartupEvent event, StartupCheck check) {
        if (!check.passed()) {
            return;
        }
        // Local runs and tests create their bucket; in production it exists and this is one HEAD request.
        store.ensureBucket().await().atMost(Duration.ofSeconds(60));
        subscription = requests.onItem()
                .transformToUni(this::handle)
                .merge(parallelism)
                .subscribe()
                .with(
                        ignored -> {},
                        failure -> Log.errorf(failure, "The request stream failed; this worker consumes no more"));
        Log.infof(
                "Consuming requests, at most %d in progress and %d gateway calls in flight",
                parallelism, processor.limiter().limit());
    }

    /** Stops taking new records; requests in progress go on. */
    public void stopIntake() {
        Cancellable current = subscription;
        if (current != null) {
            current.cancel();
        }
    }

    private Uni<Void> handle(Message<byte[]> message) {
        @SuppressWarnings("unchecked")
        IncomingKafkaRecordMetadata<byte[], byte[]> kafka =
                message.getMetadata(IncomingKafkaRecordMetadata.class).orElseThrow();
        RecordContext context = new RecordContext(
                kafka.getKey(),
                kafka.getHeaders(),
                kafka.getTopic(),
                kafka.getPartition(),
                kafka.getOffset(),
                Instant.now());
        RecordReader.Read read = reader.read(message.getPayload(), kafka.getHeaders());
        Uni<Void> work;
        if (read instanceof RecordReader.Read.Request request) {
            work = processor
                    .process(request.requestId(), request.json(), context.receivedAt())
                    .onItem()
                    .transformToUni(result -> publish(result, context));
        } else {
            work = deadLetter(message, context, ((RecordReader.Read.Unreadable) read).reason());
        }
        return work.onItemOrFailure().transformToUni((ok, failure) -> {
            if (failure == null) {
                return Uni.createFrom().completionStage(message.ack());
            }
            Log.errorf(
                    failure,
                    "Record %s could not be brought to an end; failing the channel so that it is" + " redelivered",
                    context.position());
            return Uni.createFrom().completionStage(message.nack(failure));
        });
    }

    private Uni<Void> deadLetter(Message<byte[]> message, RecordContext context, String reason) {
        Log.warnf("Record %s is not a readable request (%s); sending it to the DLQ", context.position(), reason);
        processor.metrics().deadLettered();
        return patience.retry(publisher.deadLetter(message.getPayload(), context, reason));
    }

    private Uni<Void> publish(TerminalEvent result, RecordContext context) {
        return patience.retry(publisher.publish(result, context));
    }
}
