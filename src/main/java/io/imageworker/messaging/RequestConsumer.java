package io.imageworker.messaging;

import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.Lane;
import io.imageworker.gateway.GatewaySettings;
import io.imageworker.health.StartupCheck;
import io.imageworker.messaging.intake.Lanes;
import io.imageworker.messaging.intake.ReadAhead;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.parking.ParkedHolds;
import io.imageworker.messaging.parking.RequestParking;
import io.imageworker.messaging.results.RecordContext;
import io.imageworker.messaging.results.ResultPublisher;
import io.imageworker.messaging.results.ResultSink;
import io.imageworker.processing.RequestProcessor;
import io.imageworker.processing.RequestValidator;
import io.imageworker.storage.ImageStore;
import io.imageworker.support.CpuWork;
import io.imageworker.support.RetrySettings;
import io.opentelemetry.api.trace.Span;
import io.quarkus.logging.Log;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Consumes {@code image-request}, and the priority lane's topic beside it when one is configured (channel {@code
 * priority-requests}, same consumer group). Each lane's stream is handled with an explicit limit of its own: at most
 * {@code max-in-progress} requests of each lane are in progress (gateway calls themselves are limited to {@code
 * concurrency} by the limiter, which serves the priority lane first; the rest wait for a retry, the store or Kafka
 * without holding a call slot); beyond them, a read-ahead of records waits for its producer's turn ({@link ReadAhead},
 * contract v1.2). When a lane's places are full it requests nothing more, its Kafka connector's queue
 * fills and that connector pauses polling: backpressure per lane, never an unbounded buffer, and a full normal
 * backlog never stops the priority lane's intake.
 *
 * <p>With parking on ({@link RequestParking}), the parked topic is consumed too (channel {@code parked-requests},
 * same group), into the normal lane; a record of the request topic beyond its partition's window or past its
 * producer's share is parked there instead of read ahead.
 *
 * <p>Each record is read (parsed as JSON, on the CPU pool, not on the event loop that delivers it: a record may be
 * megabytes), processed, its result (or its DLQ copy) published, and only then acknowledged, all its end told by the
 * result sink chosen at start-up ({@link ResultSink}) to {@link InFlight} and its partition's commits, so requests
 * complete out of order and a crash at any moment loses nothing. A result that
 * cannot be published within the infrastructure patience is nacked, which fails the channel (failure-strategy {@code
 * fail}): health goes down and the record is redelivered after a restart, never committed as done.
 */
@ApplicationScoped
public class RequestConsumer {

    @Inject
    @Channel("requests")
    Multi<Message<byte[]>> requests;

    /** Subscribed only when the lane is on (an idle source otherwise: {@code PriorityLaneSwitch}). */
    @Inject
    @Channel("priority-requests")
    Multi<Message<byte[]>> priorityRequests;

    /** Subscribed only when parking is on (an idle source otherwise: {@code PriorityLaneSwitch}). */
    @Inject
    @Channel("parked-requests")
    Multi<Message<byte[]>> parkedRequests;

    private final InFlight inFlight;
    private final RecordReader reader;
    private final CpuWork cpu;
    private final RequestProcessor processor;
    private final ResultSink sink;
    private final ResultPublisher publisher;
    private final RequestSpans spans;
    private final Lanes lanes;
    private final ReadAhead readAhead;
    private final WorkerConfig config;
    private final RetrySettings retry;
    private final GatewaySettings gateway;
    private final RequestParking parking;
    private final ParkedHolds holds;
    private final ProducerIdentities identities;

    RequestConsumer(
            InFlight inFlight,
            RecordReader reader,
            CpuWork cpu,
            RequestProcessor processor,
            ResultSink sink,
            ResultPublisher publisher,
            RequestSpans spans,
            Lanes lanes,
            ReadAhead readAhead,
            WorkerConfig config,
            RetrySettings retry,
            GatewaySettings gateway,
            RequestParking parking,
            ParkedHolds holds,
            ProducerIdentities identities) {
        this.inFlight = inFlight;
        this.reader = reader;
        this.cpu = cpu;
        this.processor = processor;
        this.sink = sink;
        this.publisher = publisher;
        this.spans = spans;
        this.lanes = lanes;
        this.readAhead = readAhead;
        this.config = config;
        this.retry = retry;
        this.gateway = gateway;
        this.parking = parking;
        this.holds = holds;
        this.identities = identities;
    }

    /**
     * Subscribes once SmallRye has wired the channels (its own start-up observer runs at priority 1000), if the
     * start-up checks passed and the parked topic, when named, exists ({@link RequestParking#missingTopic}), and once
     * the bucket exists (local runs and tests create theirs; in production it exists). The S3 client is made and the
     * bucket reached meanwhile, in the background ({@link ImageStore#warmUp}), as the consumer joins its group.
     */
    void start(@Observes @Priority(2000) StartupEvent event, StartupCheck check, ImageStore store) {
        if (!check.passed()) {
            return;
        }
        Optional<String> parkingProblem = parking.missingTopic();
        if (parkingProblem.isPresent()) {
            Log.errorf("image-worker cannot start: %s", parkingProblem.get());
            Quarkus.asyncExit(1);
            return;
        }
        store.warmUp();
        store.ensureBucket().await().atMost(config.startupWait());
        lanes.consume(Lane.NORMAL, requests, this::handle);
        if (lanes.priorityOn()) {
            lanes.consume(Lane.PRIORITY, priorityRequests, this::handle);
        }
        if (parking.reads()) {
            // Counted as they leave the connector's queue: a stalled stream keeps its holds (ParkedHolds).
            lanes.consumeParked(parkedRequests.onItem().invoke(holds::left), this::handle);
        }
        lanes.describe();
    }

    /**
     * Graceful shutdown, before the Kafka connector closes ({@link InFlight#drain}): stop polling and taking records
     * (one still in the connector's queue is left unacknowledged, so it is redelivered), let the requests in progress
     * finish within the shutdown grace, then let the connector commit what was acknowledged and close.
     */
    void drain(@Observes @Priority(1) ShutdownEvent event) {
        Duration grace = config.drainGrace(gateway.timeout(), retry.infrastructurePatience());
        InFlight.Drain drain = inFlight.drain(grace);
        lanes.pause(grace);
        drain.await();
        lanes.cancel();
    }

    private Uni<Void> handle(Message<byte[]> message, Lane lane) {
        RecordContext context = RecordContext.of(message, parking.topic());
        if (context.topic().equals(parking.topic())) {
            // Taken from the parked topic: its partition may be held at its share there.
            byte[] payload = message.getPayload();
            holds.taken(new TopicPartition(context.topic(), context.partition()), payload == null ? 0 : payload.length);
        }
        InFlight.Run run = inFlight.take(context);
        // Left, acknowledged as it is, or read, processed, published and ended: by the result sink alone.
        return sink.end(message, context, run, () -> handle(message, context, lane, run));
    }

    /** Within the request's span: read, process, publish (or send to the DLQ). */
    private Uni<Void> handle(Message<byte[]> message, RecordContext context, Lane lane, InFlight.Run run) {
        return spans.around(context, lane, span -> readProcessPublish(message, context, lane, run, span));
    }

    /**
     * Read on the CPU pool; then, in its producer's turn ({@link ReadAhead}), processed and published or dead-lettered;
     * or, a record of the request topic beyond its partition's window or past its producer's share, parked
     * ({@link RequestParking}).
     */
    private Uni<Void> readProcessPublish(
            Message<byte[]> message, RecordContext context, Lane lane, InFlight.Run run, Span span) {
        return cpu.run(() -> reader.read(message.getPayload(), context.headers()))
                .chain(read -> read.either(
                        request -> {
                            // In topic mode, the producer its topic authenticates (IMAGE_WORKER_PRODUCER_IDENTITY).
                            String impostor = identities.authenticate(message, context, request.json());
                            String producer = RequestValidator.echoableProducer(request.json());
                            return inTurn(
                                    context,
                                    new ReadAhead.Asking(
                                            lane,
                                            message,
                                            context,
                                            run,
                                            request.requestId(),
                                            ReadAhead.Producer.of(producer)),
                                    producer,
                                    () -> parking.park(
                                            request.requestId(), producer, message.getPayload(), context, run),
                                    tooLarge -> processPublish(request, context, lane, run, span, tooLarge, impostor),
                                    () -> processPublish(request, context, lane, run, span, null, impostor));
                        },
                        unreadable -> inTurn(
                                context,
                                ReadAhead.Asking.notARequest(lane, message, context, run),
                                null,
                                () -> parking.park(null, null, message.getPayload(), context, run),
                                tooLarge -> sink.deadLetter(message.getPayload(), context, run, unreadable.reason()),
                                () -> sink.deadLetter(message.getPayload(), context, run, unreadable.reason()))));
    }

    /**
     * {@code work} in its turn, or {@code park} instead when the record may be parked and the read-ahead says so; or,
     * when its parked copy would be larger than Kafka takes ({@link RequestParking#tooLargeToPark}), {@code
     * unparkable} of the reason at once instead of the park: a request is refused ({@code INVALID_REQUEST}, no call),
     * a record that is no request goes to the DLQ (cut to fit there), so that nothing waits in the read-ahead that
     * parking was to keep free.
     */
    private Uni<Void> inTurn(
            RecordContext context,
            ReadAhead.Asking asking,
            String producer,
            Supplier<Uni<Void>> park,
            Function<String, Uni<Void>> unparkable,
            Supplier<Uni<Void>> work) {
        if (!parking.parks(context)) {
            return readAhead.inTurn(asking, work);
        }
        String tooLarge = parking.tooLargeToPark(producer, asking.message().getPayload(), context);
        return readAhead.parkedOrInTurn(asking, park, tooLarge == null ? null : () -> unparkable.apply(tooLarge), work);
    }

    /** The refusal of a request that is {@code tooLargeToPark} and whose result is {@code unpublishable}, or null. */
    private static String refusal(String tooLargeToPark, String unpublishable) {
        if (tooLargeToPark == null || unpublishable == null) {
            return tooLargeToPark == null ? unpublishable : tooLargeToPark;
        }
        return tooLargeToPark + "; " + unpublishable;
    }

    /**
     * A request processed (its start told as its first call leaves) and its result published; refused before any call
     * when its record's key or trace leaves no room for a result ({@link ResultPublisher#unpublishable}); refused before
     * anything else, the ledger unread, when it names a producer its topic does not authenticate ({@code impostor},
     * the reason, or null: {@link ProducerIdentities}).
     */
    private Uni<Void> processPublish(
            RecordReader.Read.Request request,
            RecordContext context,
            Lane lane,
            InFlight.Run run,
            Span span,
            String tooLargeToPark,
            String impostor) {
        String requestId = request.requestId();
        String unpublishable = refusal(tooLargeToPark, publisher.unpublishable(requestId, context, span));
        return publisher
                .tellingStarts(
                        requestId,
                        context,
                        span,
                        impostor != null
                                ? processor.refuse(requestId, request.json(), context.receivedAt(), impostor)
                                : processor.process(
                                        requestId, request.json(), context.receivedAt(), lane, unpublishable))
                .invoke(event -> RequestSpans.describe(span, event))
                .chain(result -> sink.publish(result, context, run, span));
    }
}
