package io.imageworker.processing;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.ErrorCode;
import io.imageworker.RequestFailure;
import io.imageworker.TerminalEvent;
import io.imageworker.gateway.GatewayCalls;
import io.imageworker.storage.ImageIntake;
import io.imageworker.storage.ImageStorage;
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
 * The story of one request, top to bottom: already recorded? replay it. Else validate, check the deadline, plan the
 * call (size, references), call the gateway, take the image out of the answer, store it, record the outcome. The
 * returned event is published by the caller, which then commits.
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
    private final GatewayCalls gateway;
    private final ImageIntake intake;
    private final ImageStorage storage;
    private final WorkerMetrics metrics;
    private final Shutdown shutdown;
    private final Tracing tracing;
    private final Map<String, Uni<TerminalEvent>> inFlight = new ConcurrentHashMap<>();

    RequestProcessor(
            ResultLedger ledger,
            RequestValidator validator,
            CallPlanner planner,
            GatewayCalls gateway,
            ImageIntake intake,
            ImageStorage storage,
            WorkerMetrics metrics,
            Shutdown shutdown,
            Tracing tracing) {
        this.ledger = ledger;
        this.validator = validator;
        this.planner = planner;
        this.gateway = gateway;
        this.intake = intake;
        this.storage = storage;
        this.metrics = metrics;
        this.shutdown = shutdown;
        this.tracing = tracing;
    }

    /** The terminal event of a request with a usable id; copies of one id arriving while it runs share it. */
    public Uni<TerminalEvent> process(String requestId, JsonNode json, Instant receivedAt) {
        return inFlight.computeIfAbsent(requestId, id -> Uni.createFrom()
                .deferred(() -> outcome(id, json, receivedAt))
                .onItemOrFailure()
                .transformToUni((outcome, failure) -> settle(id, outcome, failure))
                .invoke(metrics::ended)
                .onTermination()
                .invoke(() -> inFlight.remove(id))
                .memoize()
                .indefinitely());
    }

    /** What the request comes to: its recorded outcome, replayed, or one decided now (recorded by {@link #settle}). */
    private Uni<Outcome> outcome(String requestId, JsonNode json, Instant receivedAt) {
        return ledger.find(requestId).onItemOrFailure().transformToUni((recorded, lookupFailed) -> {
            if (lookupFailed != null) {
                // Without the record, a call could bill a request that already ended: no call.
                return decided(Progress.refused(
                        requestId, json, receivedAt, ErrorCode.STORAGE_ERROR, lookupFailed.getMessage()));
            }
            return recorded.isPresent()
                    ? Uni.createFrom().item(new Outcome(recorded.get(), true))
                    : fresh(requestId, json, receivedAt);
        });
    }

    private Uni<Outcome> fresh(String requestId, JsonNode json, Instant receivedAt) {
        return tracing.stage("validate", () -> Uni.createFrom().item(() -> validator.validate(json)))
                .chain(validation -> {
                    if (validation instanceof RequestValidator.Result.Invalid invalid) {
                        Log.infof("[%s] refused: %s", requestId, invalid.message());
                        return decided(
                                Progress.refused(requestId, json, receivedAt, invalid.code(), invalid.message()));
                    }
                    Progress begun = Progress.begin(((RequestValidator.Result.Valid) validation).request(), receivedAt);
                    if (begun.expired()) {
                        return decided(begun.failed(
                                ErrorCode.EXPIRED,
                                "the deadline " + begun.request().deadline() + " passed before the work started"));
                    }
                    return endedAs(
                                    begun,
                                    planner.plan(begun.request())
                                            .chain(plan -> callAndStore(begun.sized(plan.size()), plan)))
                            .map(event -> new Outcome(event, false));
                });
    }

    /** The gateway's image, taken from its answer, checked and stored; or why there is none. */
    private Uni<TerminalEvent> callAndStore(Progress sized, CallPlanner.Plan plan) {
        return gateway.call(sized.request().requestId(), plan.request()).chain(result -> {
            Progress called = sized.called(result);
            if (result.image() == null) {
                return Uni.createFrom().item(called.failed(result.failure()));
            }
            return endedAs(
                    called,
                    intake.take(
                                    called.request().requestId(),
                                    result.image(),
                                    plan.size().sent())
                            .chain(image -> storage.store(called.request(), image)
                                    .map(stored -> called.completed(image, stored))));
        });
    }

    /** {@code work}, or the failed event of {@code progress} when a stage refused to go on, or a defect. */
    private Uni<TerminalEvent> endedAs(Progress progress, Uni<TerminalEvent> work) {
        return work.onFailure(RequestFailure.class)
                .recoverWithItem(failure -> refused(progress, (RequestFailure) failure))
                .onFailure(this::isDefect)
                .recoverWithItem(error -> defect(progress, error));
    }

    private static TerminalEvent refused(Progress progress, RequestFailure failure) {
        String requestId = progress.request().requestId();
        if (failure.code() == ErrorCode.STORAGE_ERROR) {
            Log.errorf("[%s] %s", requestId, failure.getMessage());
        } else {
            Log.infof("[%s] refused: %s", requestId, failure.getMessage());
        }
        return progress.failed(failure.code(), failure.getMessage());
    }

    private boolean isDefect(Throwable error) {
        // After the shutdown grace a failure is most likely the shutdown's own (clients closing): see settle().
        return !(error instanceof AbandonedException) && !shutdown.abandoned();
    }

    /** Every expected failure is already an event: this is a defect, reported as such, not hidden. */
    private static TerminalEvent defect(Progress progress, Throwable error) {
        Log.errorf(error, "[%s] unexpected failure", progress.request().requestId());
        ErrorCode code = error instanceof software.amazon.awssdk.core.exception.SdkException
                ? ErrorCode.STORAGE_ERROR
                : ErrorCode.UPSTREAM_ERROR;
        return progress.failed(code, "unexpected failure: " + error);
    }

    private static Uni<Outcome> decided(TerminalEvent event) {
        return Uni.createFrom().item(new Outcome(event, false));
    }

    /**
     * The end of every request, in one place. The shutdown rule ({@link Shutdown}): once the grace is over, nothing
     * decided now that is a failure (an event or an exception) is recorded or published; the request is abandoned and
     * its record redelivered. Otherwise an outcome decided now is recorded, so that a redelivery or a duplicate
     * replays it.
     */
    private Uni<TerminalEvent> settle(String requestId, Outcome outcome, Throwable failure) {
        boolean failedNow = failure != null || !outcome.replayed() && outcome.event() instanceof TerminalEvent.Failed;
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
        return outcome.replayed() ? Uni.createFrom().item(outcome.event()) : ledger.record(outcome.event());
    }

    /** A request's event, and whether it was replayed from its record. */
    private record Outcome(TerminalEvent event, boolean replayed) {}
}
