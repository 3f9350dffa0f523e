package io.imageworker.processing;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.Lane;
import io.imageworker.contract.RequestFailure;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.progress.RequestEvents;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.storage.ResultLedger;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.Shutdown;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The story of one request, top to bottom: already recorded? replay it. Else validate, recall the variants an
 * earlier attempt recorded, check for a cancel (contract v1.2) and the deadline, plan the call (size, references), make the variants (call the gateway,
 * take each image out of its answer, store it: {@link Variants}), record the outcome. The returned event is published
 * by the caller, which then commits.
 *
 * <p>The {@code requestId} is an idempotency key: an outcome already recorded is replayed without a gateway call, and
 * copies of one request in flight at once share one execution. Every stage ends a request it cannot carry on with a
 * {@link RequestFailure} naming the code; anything else is a defect, reported as one.
 */
@ApplicationScoped
public class RequestProcessor {

    private final ResultLedger ledger;
    private final RequestValidator validator;
    private final CallPlanner planner;
    private final Variants variants;
    private final WorkerMetrics metrics;
    private final Shutdown shutdown;
    private final Tracing tracing;
    private final Cancellations cancellations;
    /** Where each request's work is under way, from the start of its story to its end. */
    private final RequestsInProgress progress;
    /** Where the end of each request's work is told to the status read model. */
    private final RequestEvents events;
    /** Whether ids are unique only within their producer ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}). */
    private final boolean idsPerProducer;
    /** The executions under way, by the name their request is stored under ({@code ImageRequest.storageId()}). */
    private final Map<String, Uni<TerminalEvent>> inFlight = new ConcurrentHashMap<>();

    RequestProcessor(
            ResultLedger ledger,
            RequestValidator validator,
            CallPlanner planner,
            Variants variants,
            WorkerMetrics metrics,
            Shutdown shutdown,
            Tracing tracing,
            Cancellations cancellations,
            RequestsInProgress progress,
            RequestEvents events,
            WorkerConfig config) {
        this.ledger = ledger;
        this.validator = validator;
        this.planner = planner;
        this.variants = variants;
        this.metrics = metrics;
        this.shutdown = shutdown;
        this.tracing = tracing;
        this.cancellations = cancellations;
        this.progress = progress;
        this.events = events;
        this.idsPerProducer = config.producerIdentity() == WorkerConfig.ProducerIdentity.topic;
    }

    /** {@link #process(String, JsonNode, Instant, Lane)} of the normal lane. */
    public Uni<TerminalEvent> process(String requestId, JsonNode json, Instant receivedAt) {
        return process(requestId, json, receivedAt, Lane.NORMAL);
    }

    /**
     * The terminal event of a request with a usable id, which came in by {@code lane}; copies of one id arriving while
     * it runs share it. Its gateway calls are told to the gateway's {@code CallListener}s as they leave.
     */
    public Uni<TerminalEvent> process(String requestId, JsonNode json, Instant receivedAt, Lane lane) {
        return process(requestId, json, receivedAt, lane, null);
    }

    /**
     * {@link #process(String, JsonNode, Instant, Lane)}, refused with {@code INVALID_REQUEST} and {@code
     * unpublishable} for a message before any call when that is not null: the record it came in leaves no room for its
     * result (a key or a {@code tracestate} nearly as large as Kafka takes), so the result goes out without them and
     * no call is spent on it. A request already recorded is still replayed.
     */
    public Uni<TerminalEvent> process(
            String requestId, JsonNode json, Instant receivedAt, Lane lane, String unpublishable) {
        // Where ids are unique within a producer, copies share an execution only when they are of one producer.
        String stored = ImageRequest.scopedId(
                RequestValidator.idScope(idsPerProducer, RequestValidator.echoableProducer(json)), requestId);
        return inFlight.computeIfAbsent(stored, key -> Uni.createFrom()
                .deferred(() -> {
                    progress.begun(stored);
                    return outcome(requestId, stored, json, receivedAt, lane, unpublishable);
                })
                .onItemOrFailure()
                .transformToUni((outcome, failure) -> settle(requestId, stored, outcome, failure))
                .invoke(metrics::ended)
                .onTermination()
                .invoke(() -> events.ended(stored, progress.over(stored)))
                .onTermination()
                .invoke(() -> inFlight.remove(stored))
                .memoize()
                .indefinitely());
    }

    /**
     * The refusal ({@code INVALID_REQUEST}, with {@code message}) of a request that may not be worked at all, decided
     * before its ledger is read and recorded nowhere: a request naming a producer its topic does not authenticate
     * (issue 49) is answered without reading, replaying or overwriting the record of anyone's request, and costs no
     * call.
     */
    public Uni<TerminalEvent> refuse(String requestId, JsonNode json, Instant receivedAt, String message) {
        return Uni.createFrom()
                .item(() -> {
                    Log.infof("[%s] refused: %s", requestId, message);
                    return (TerminalEvent)
                            RequestSoFar.refused(requestId, json, receivedAt, ErrorCode.INVALID_REQUEST, message);
                })
                .invoke(metrics::ended);
    }

    /** What the request comes to: its recorded outcome, replayed, or one decided now (recorded by {@link #settle}). */
    private Uni<Outcome> outcome(
            String requestId, String stored, JsonNode json, Instant receivedAt, Lane lane, String unpublishable) {
        return ledger.find(stored).onItemOrFailure().transformToUni((recorded, lookupFailed) -> {
            if (lookupFailed != null) {
                // Without the record, a call could bill a request that already ended: no call, and nothing to
                // record it in.
                return ended(
                        RequestSoFar.refused(
                                requestId, json, receivedAt, ErrorCode.STORAGE_ERROR, lookupFailed.getMessage()),
                        Source.UNREAD_LEDGER);
            }
            return recorded.isPresent()
                    ? ended(recorded.get(), Source.REPLAYED)
                    : fresh(requestId, json, receivedAt, lane, unpublishable);
        });
    }

    private Uni<Outcome> fresh(String requestId, JsonNode json, Instant receivedAt, Lane lane, String unpublishable) {
        if (unpublishable != null) {
            Log.infof("[%s] refused: %s", requestId, unpublishable);
            return ended(
                    RequestSoFar.refused(requestId, json, receivedAt, ErrorCode.INVALID_REQUEST, unpublishable),
                    Source.DECIDED);
        }
        return tracing.stage("validate", () -> Uni.createFrom().item(() -> validator.validate(json)))
                .chain(validation -> {
                    if (validation instanceof RequestValidator.Result.Invalid invalid) {
                        Log.infof("[%s] refused: %s", requestId, invalid.message());
                        return ended(
                                RequestSoFar.refused(requestId, json, receivedAt, invalid.code(), invalid.message()),
                                Source.DECIDED);
                    }
                    RequestSoFar begun =
                            RequestSoFar.begin(((RequestValidator.Result.Valid) validation).request(), receivedAt);
                    return endedAs(begun, variants.recall(begun).chain(recalled -> carryOn(recalled, lane)))
                            .map(event -> new Outcome(event, Source.DECIDED));
                });
    }

    /**
     * A valid request whose earlier variants are known: cancelled (contract v1.2: a cancel came before any of its
     * calls), expired, or planned and made, its calls let go by its cancellation ticket.
     */
    private Uni<TerminalEvent> carryOn(RequestSoFar recalled, Lane lane) {
        // Where ids are unique within their producer, cancels name <producer>/<requestId> (its producer's cancel
        // topic).
        Cancellations.Ticket ticket = cancellations.ticket(recalled.request().storageId(), recalled.called());
        if (ticket.cancelled()) {
            ticket.close();
            return Uni.createFrom()
                    .item(recalled.stopped(
                            ErrorCode.CANCELLED,
                            "cancelled before any gateway call was made (a record on the cancel topic named this"
                                    + " request)"));
        }
        if (recalled.expired()) {
            ticket.close();
            return Uni.createFrom()
                    .item(recalled.stopped(
                            ErrorCode.EXPIRED,
                            "the deadline " + recalled.request().deadline() + " passed before the work started"));
        }
        return endedAs(recalled, planner.plan(recalled.request()).chain(plan -> variants.make(
                                recalled.sized(plan.size()), plan, lane, ticket)
                        .onTermination()
                        .invoke(plan::release)))
                .onTermination()
                .invoke(ticket::close);
    }

    /** {@code work}, or the event of {@code progress} stopped where a stage refused to go on, or by a defect. */
    private Uni<TerminalEvent> endedAs(RequestSoFar progress, Uni<TerminalEvent> work) {
        return Endings.orEnding(work, progress.request().requestId(), shutdown, progress::stopped);
    }

    private static Uni<Outcome> ended(TerminalEvent event, Source source) {
        return Uni.createFrom().item(new Outcome(event, source));
    }

    /**
     * The end of every request, in one place. The shutdown rule ({@link Shutdown}): once the grace is over, nothing
     * decided now that is a failure (an event or an exception) is recorded or published; the request is abandoned and
     * its record redelivered. Otherwise an outcome decided now is recorded, so that a redelivery or a duplicate
     * replays it: refusals made before any call too, since deciding again may not give the same answer (a spend
     * window that has ended, a cancel no longer held), and the same {@code requestId} is the same request. Only an
     * outcome decided without reading the ledger (it could not be read) is not: the store is what failed.
     */
    private Uni<TerminalEvent> settle(String requestId, String stored, Outcome outcome, Throwable failure) {
        boolean failedNow = failure != null
                || outcome.source() != Source.REPLAYED && outcome.event() instanceof TerminalEvent.Failed;
        if (shutdown.abandoned() && failedNow) {
            return Uni.createFrom()
                    .failure(
                            failure instanceof AbandonedException abandoned
                                    ? abandoned
                                    : new AbandonedException(requestId, failure));
        }
        if (failure != null) {
            return Uni.createFrom().failure(failure);
        }
        if (outcome.source() == Source.REPLAYED) {
            return Uni.createFrom().item(outcome.event());
        }
        cancellations.ended(outcome.event());
        return outcome.source() == Source.DECIDED
                ? ledger.record(stored, outcome.event())
                : Uni.createFrom().item(outcome.event());
    }

    /** A request's event, and where it comes from. */
    private record Outcome(TerminalEvent event, Source source) {}

    private enum Source {
        /** Read from the request's record. */
        REPLAYED,
        /** Decided now, the ledger having no record of the request. */
        DECIDED,
        /** Decided now because the ledger could not be read. */
        UNREAD_LEDGER
    }
}
