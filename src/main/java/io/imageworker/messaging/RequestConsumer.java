package io.imageworker.messaging;

import io.imageworker.Lane;
import io.imageworker.TerminalEvent;
import io.imageworker.config.WorkerConfig;
import io.imageworker.health.StartupCheck;
import io.imageworker.processing.RequestProcessor;
import io.imageworker.processing.RequestValidator;
import io.imageworker.storage.ImageStore;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.CpuWork;
import io.imageworker.support.Patience;
import io.imageworker.support.Shutdown;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import io.opentelemetry.api.trace.Span;
import io.quarkus.logging.Log;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.reactive.messaging.kafka.KafkaClientService;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Consumes {@code image-request}, and the priority lane's topic beside it when one is configured (channel {@code
 * priority-requests}, same consumer group). Each lane's stream is merged with an explicit limit of its own: at most
 * {@code max-in-progress} requests of each lane are in progress (gateway calls themselves are limited to {@code
 * concurrency} by the limiter, which serves the priority lane first; the rest wait for a retry, the store or Kafka
 * without holding a call slot). When a lane's merge is full it requests nothing more, its Kafka connector's queue
 * fills and that connector pauses polling: backpressure per lane, never an unbounded buffer, and a full normal
 * backlog never stops the priority lane's intake. A record is read (parsed as JSON) on the CPU pool, not on the
 * event loop that delivers it: a record may be megabytes.
 *
 * <p>Each record is acknowledged only after its terminal event (or its DLQ copy) has been acknowledged by Kafka; the
 * throttled commit strategy then commits the highest offset below which everything is acknowledged, so requests
 * complete out of order and a crash at any moment loses nothing (at-least-once). A result that cannot be published
 * within the infrastructure patience is nacked, which fails the channel (failure-strategy {@code fail}): health goes
 * down and the record is redelivered after a restart, never committed as done.
 */
@ApplicationScoped
public class RequestConsumer {

    /** The channel of each lane. */
    static final Map<Lane, String> CHANNELS = Map.of(Lane.NORMAL, "requests", Lane.PRIORITY, "priority-requests");

    @Inject
    @Channel("requests")
    Multi<Message<byte[]>> requests;

    /** Subscribed only when the lane is on (an idle source otherwise: {@code PriorityLaneSwitch}). */
    @Inject
    @Channel("priority-requests")
    Multi<Message<byte[]>> priorityRequests;

    private final RecordReader reader;
    private final RequestProcessor processor;
    private final ResultPublisher publisher;
    private final Patience patience;
    private final ImageStore store;
    private final CpuWork cpu;
    private final Shutdown shutdown;
    private final WorkerMetrics metrics;
    private final Tracing tracing;
    private final WorkerConfig config;
    private final KafkaClientService kafkaClients;
    private final PartitionWork partitions;
    private final PauseAwareCommit commit;
    private final ResultTransactions transactions;
    private final Intake intake;
    private final AtomicInteger inProgress = new AtomicInteger();
    private final Map<Lane, Cancellable> subscriptions = new EnumMap<>(Lane.class);
    private volatile boolean draining;

    RequestConsumer(
            RecordReader reader,
            RequestProcessor processor,
            ResultPublisher publisher,
            ImageStore store,
            KafkaClientService kafkaClients,
            PartitionWork partitions,
            WorkerConfig config,
            Patience patience,
            CpuWork cpu,
            Shutdown shutdown,
            WorkerMetrics metrics,
            Tracing tracing,
            @Identifier(PauseAwareCommit.STRATEGY) PauseAwareCommit commit,
            ResultTransactions transactions,
            Intake intake) {
        this.intake = intake;
        this.reader = reader;
        this.processor = processor;
        this.publisher = publisher;
        this.store = store;
        this.kafkaClients = kafkaClients;
        this.partitions = partitions;
        this.config = config;
        this.patience = patience;
        this.cpu = cpu;
        this.shutdown = shutdown;
        this.metrics = metrics;
        this.tracing = tracing;
        this.commit = commit;
        this.transactions = transactions;
    }

    /** Subscribes once SmallRye has wired the channels (its own start-up observer runs at priority 1000). */
    void start(@Observes @Priority(2000) StartupEvent event, StartupCheck check) {
        if (!check.passed()) {
            return;
        }
        // Local runs and tests create their bucket; in production it exists and this is one HEAD request.
        store.ensureBucket().await().atMost(config.startupWait());
        consume(Lane.NORMAL, requests);
        if (priorityLane()) {
            consume(Lane.PRIORITY, priorityRequests);
        }
        Log.infof(
                "Consuming requests%s, at most %d in progress per lane (%d more read ahead) and %d gateway calls in"
                        + " flight",
                priorityLane()
                        ? " and priority requests from "
                                + config.topic().requestPriority().get()
                                + " (the normal lane keeps at least " + config.priorityMinShare()
                                + " of the gateway slots while both wait)"
                        : "",
                config.inProgressLimit(),
                config.readAheadLimit(),
                config.concurrency());
    }

    private boolean priorityLane() {
        return config.topic()
                .requestPriority()
                .filter(topic -> !topic.isBlank())
                .isPresent();
    }

    /** One lane: its own merge, so that its backpressure pauses its own consumer only. */
    private void consume(Lane lane, Multi<Message<byte[]>> records) {
        synchronized (subscriptions) {
            subscriptions.put(
                    lane,
                    intake.taken(lane, records)
                            .onItem()
                            .transformToUni(message -> handle(message, lane))
                            .merge(config.intakeLimit())
                            .subscribe()
                            .with(
                                    ignored -> {},
                                    failure -> Log.errorf(
                                            failure,
                                            "The %s request stream failed; this worker consumes no more of it",
                                            lane.name().toLowerCase(java.util.Locale.ROOT))));
        }
    }

    /**
     * Graceful shutdown, before the Kafka connector closes: stop polling, take no new record (a record still in the
     * connector's queue is left unacknowledged, so it is redelivered), start no new gateway call (a request that would
     * need one is given up at once and redelivered, see {@link Shutdown}), let the calls in flight finish and their
     * requests be stored and published within the shutdown grace, then let the connector commit what was acknowledged
     * and close. A request still running when the grace ends is abandoned: no failure is recorded or published for it,
     * and its record is not acknowledged: it is redelivered, never lost and never failed by the shutdown.
     */
    void drain(@Observes @Priority(1) ShutdownEvent event) {
        draining = true;
        // No gateway call starts from now on: the grace is sized for the calls in flight, not for new ones.
        shutdown.startDraining();
        Duration grace = config.drainGrace();
        long deadline = System.nanoTime() + grace.toNanos();
        for (Lane lane : lanes()) {
            try {
                kafkaClients.getConsumer(CHANNELS.get(lane)).pause().await().atMost(grace);
            } catch (RuntimeException e) {
                Log.debugf("Could not pause the %s consumer: %s", CHANNELS.get(lane), e.toString());
            }
        }
        Log.infof("Shutting down: waiting up to %s for %d request(s) in progress", grace, inProgress.get());
        synchronized (inProgress) {
            long remaining;
            while (inProgress.get() > 0 && (remaining = deadline - System.nanoTime()) > 0) {
                try {
                    // The shutdown thread waits, not an event loop; finished requests notify.
                    inProgress.wait(Math.max(1, remaining / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        // From here on, what still runs must neither start a gateway call nor end as a failure: it is redelivered.
        shutdown.abandonUnfinished();
        int left = inProgress.get();
        if (left > 0) {
            Log.warnf(
                    "Shutdown grace over: %d request(s) did not finish; they are not committed and will be"
                            + " redelivered",
                    left);
        } else {
            Log.info("Every request in progress has finished; committing and closing");
        }
        synchronized (subscriptions) {
            subscriptions.values().forEach(Cancellable::cancel);
        }
    }

    private List<Lane> lanes() {
        synchronized (subscriptions) {
            return List.copyOf(subscriptions.keySet());
        }
    }

    private void finished() {
        if (inProgress.decrementAndGet() == 0 && draining) {
            synchronized (inProgress) {
                inProgress.notifyAll();
            }
        }
    }

    /** Requests in progress now, for health and tests. */
    public int inProgress() {
        return inProgress.get();
    }

    private Uni<Void> handle(Message<byte[]> message, Lane lane) {
        if (draining) {
            // Shutting down: leave the record unacknowledged, it is redelivered to the next consumer.
            return Uni.createFrom().voidItem();
        }
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
        switch (partitions.started(context)) {
            case LEFT -> {
                // A rebalance took its partition away while the record was on its way: the new owner takes it.
                return Uni.createFrom().voidItem();
            }
            case DONE -> {
                // The partition's last owner finished it after the offset it committed: its event is out already.
                Log.debugf("Record %s was finished by the partition's last owner; acknowledged", context.position());
                return Uni.createFrom().completionStage(message.ack());
            }
            case RUN -> {}
        }
        inProgress.incrementAndGet();
        PauseAwareCommit.Tracked tracked = commit.track();
        return handleRecord(message, context, lane, tracked).onTermination().invoke(() -> {
            tracked.done();
            finished();
        });
    }

    private Uni<Void> handleRecord(
            Message<byte[]> message, RecordContext context, Lane lane, PauseAwareCommit.Tracked tracked) {
        Span span = tracing.startRequest("image-request", name -> RecordReader.header(context.headers(), name));
        span.setAttribute("messaging.system", "kafka");
        span.setAttribute("messaging.destination.name", context.topic());
        span.setAttribute("messaging.kafka.partition", context.partition());
        span.setAttribute("messaging.kafka.offset", context.offset());
        span.setAttribute("image_worker.lane", lane.name());
        Uni<Void> work = tracing.within(
                        span,
                        cpu.run(() -> reader.read(message.getPayload(), context.headers()))
                                .chain(read -> intake.inTurn(
                                        lane,
                                        message,
                                        context,
                                        read instanceof RecordReader.Read.Request request
                                                ? RequestValidator.echoableProducer(request.json())
                                                : null,
                                        tracked,
                                        () -> draining,
                                        () -> read instanceof RecordReader.Read.Request request
                                                ? processor
                                                        .process(
                                                                request.requestId(),
                                                                request.json(),
                                                                context.receivedAt(),
                                                                lane,
                                                                started -> publisher.started(started, context, span))
                                                        .invoke(event -> describe(span, event))
                                                        .chain(result -> publish(result, context, span))
                                                : deadLetter(
                                                        message,
                                                        context,
                                                        ((RecordReader.Read.Unreadable) read).reason()))))
                .onTermination()
                .invoke((ok, failure, cancelled) -> {
                    if (failure != null) {
                        Tracing.failed(span, failure);
                    }
                    span.end();
                });
        return work.onItemOrFailure().transformToUni((ok, failure) -> {
            if (failure == null) {
                return Uni.createFrom().completionStage(message.ack()).invoke(() -> partitions.ended(context, true));
            }
            partitions.ended(context, false);
            if (failure instanceof AbandonedException || failure instanceof Intake.GivenUp) {
                // Shutting down: neither acknowledged nor failed, so the record is redelivered to the next worker.
                Log.info(failure.getMessage());
                return Uni.createFrom().voidItem();
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
        metrics.deadLettered();
        if (transactions.enabled()) {
            byte[] value = message.getPayload();
            return tracing.stage(
                    "dead letter",
                    () -> transactions.publish(
                            context.position(),
                            context,
                            List.of(publisher.deadLetterRecord(value, context, reason, false)),
                            () -> List.of(publisher.deadLetterRecord(value, context, reason, true))));
        }
        return tracing.stage(
                "dead letter", () -> patience.retry(publisher.deadLetter(message.getPayload(), context, reason)));
    }

    private Uni<Void> publish(TerminalEvent result, RecordContext context, Span span) {
        if (transactions.enabled()) {
            return tracing.stage(
                    "publish",
                    () -> transactions.publish(
                            result.requestId(), context, List.of(publisher.record(result, context, span)), null));
        }
        return tracing.stage("publish", () -> patience.retry(publisher.publish(result, context, span)));
    }

    private static void describe(Span span, TerminalEvent event) {
        span.setAttribute("image_worker.request_id", event.requestId());
        span.setAttribute("image_worker.outcome", event.ceType());
        if (event instanceof TerminalEvent.Failed failed) {
            span.setAttribute("image_worker.error_code", failed.error().code().name());
        }
    }
}
