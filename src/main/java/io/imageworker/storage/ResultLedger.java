package io.imageworker.storage;

import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.EventCodec;
import io.imageworker.contract.RequestFailure;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.contract.VariantOutcome;
import io.imageworker.support.Patience;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The idempotency record of each {@code requestId}: its terminal event, kept as a result document
 * ({@code <result-prefix><requestId>.json}) before the event is published. A request whose outcome is recorded is
 * answered from the record, with no gateway call, whether it is a redelivery after a crash or a producer's duplicate.
 *
 * <p>A request with {@code count} above 1 also has a record per variant ({@code <result-prefix><requestId>/<i>.json}),
 * written as each variant ends: a redelivery before its terminal event is recorded calls the gateway only for the
 * variants without one.
 *
 * <p>Each method takes the name the request is stored under: its {@code requestId}, or, where ids are unique only
 * within a producer ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}), {@code <producer>/<requestId>} ({@code
 * ImageRequest.storageId()}), so that no producer reads, replays or overwrites another's record by its id.
 */
@ApplicationScoped
public class ResultLedger {

    private final ImageStore store;
    private final EventCodec codec;
    private final Patience patience;
    private final WorkerMetrics metrics;
    private final Tracing tracing;

    ResultLedger(ImageStore store, EventCodec codec, Patience patience, WorkerMetrics metrics, Tracing tracing) {
        this.store = store;
        this.codec = codec;
        this.patience = patience;
        this.metrics = metrics;
        this.tracing = tracing;
    }

    /**
     * The recorded outcome of {@code requestId}, if there is one (it is then replayed: logged and counted). Fails with {@link RequestFailure}
     * ({@code STORAGE_ERROR}) when the store cannot be read or the document cannot be read as an event: without the
     * record, a call could bill a request that already ended, so no call is made.
     */
    public Uni<Optional<TerminalEvent>> find(String requestId) {
        return tracing.stage(
                "ledger lookup",
                () -> lookUp(requestId),
                (span, recorded) -> span.setAttribute("image_worker.recorded", recorded.isPresent()));
    }

    private Uni<Optional<TerminalEvent>> lookUp(String requestId) {
        return patience.retry(store.findResult(requestId))
                .onFailure()
                .transform(error -> unreadable(requestId, error))
                .map(document -> document.map(bytes -> read(requestId, bytes)));
    }

    private static RequestFailure unreadable(String requestId, Throwable error) {
        Log.errorf("[%s] the result store cannot be read: %s", requestId, error.toString());
        return new RequestFailure(
                ErrorCode.STORAGE_ERROR,
                "the result store cannot be read, so the request was not sent to the gateway: "
                        + StorageFailures.describe(error),
                error);
    }

    private TerminalEvent read(String requestId, byte[] document) {
        TerminalEvent recorded = decode(requestId, document);
        Log.infof(
                "[%s] already ended as %s; replaying the recorded result, no gateway call",
                requestId, recorded.ceType());
        metrics.replayed();
        return recorded;
    }

    /**
     * The recorded outcome of {@code requestId} as a status query sees it: one read, not retried (the caller asks
     * again), neither logged nor counted as a replay. Fails with the store's own failure when it cannot be read, and
     * with {@link RequestFailure} ({@code STORAGE_ERROR}) when the record cannot be read as an event.
     */
    public Uni<Optional<TerminalEvent>> peek(String requestId) {
        return store.findResult(requestId).map(document -> document.map(bytes -> decode(requestId, bytes)));
    }

    private TerminalEvent decode(String requestId, byte[] document) {
        try {
            return codec.read(document);
        } catch (IOException e) {
            // Neither crash the consumer on it (it would be redelivered forever) nor call again (it may be billed).
            Log.errorf(
                    "[%s] the recorded result is unreadable (%s); no gateway call is made for it again, and its"
                            + " status cannot be told",
                    requestId, e.toString());
            throw new RequestFailure(
                    ErrorCode.STORAGE_ERROR,
                    "the recorded result of this requestId is unreadable; send a new requestId to try again",
                    e);
        }
    }

    /**
     * The recorded variants of {@code requestId}, in no particular order. Fails with {@link RequestFailure} ({@code
     * STORAGE_ERROR}) when the store cannot be read: without the records, a call could bill a variant that already
     * ended, so no call is made. A record that cannot be read as a variant is left out (logged): that variant is
     * called again.
     */
    public Uni<List<VariantOutcome>> variants(String requestId) {
        return tracing.stage(
                "ledger lookup (variants)",
                () -> patience.retry(store.findVariants(requestId))
                        .onFailure()
                        .transform(error -> unreadable(requestId, error))
                        .map(documents -> readVariants(requestId, documents)),
                (span, recorded) -> span.setAttribute("image_worker.recorded_variants", recorded.size()));
    }

    private List<VariantOutcome> readVariants(String requestId, List<byte[]> documents) {
        List<VariantOutcome> variants = new ArrayList<>();
        for (byte[] document : documents) {
            try {
                variants.add(codec.readVariant(document));
            } catch (IOException e) {
                Log.warnf("[%s] a variant record is unreadable (%s); that variant is called again", requestId, e);
            }
        }
        if (!variants.isEmpty()) {
            Log.infof(
                    "[%s] %d variant(s) already ended; calling the gateway only for the others",
                    requestId, variants.size());
        }
        return variants;
    }

    /**
     * Records how a variant of a request with {@code count} above 1 ended, so that a redelivery does not call for it
     * again. A variant that made no call is not recorded (calling for it later costs nothing more). A record that
     * cannot be written within the patience is logged, and the request goes on: a redelivery would then call for that
     * variant again.
     */
    public Uni<Void> recordVariant(String requestId, VariantOutcome variant) {
        if (variant.attempts() == 0) {
            return Uni.createFrom().voidItem();
        }
        return tracing.stage(
                        "ledger write (variant)",
                        () -> patience.retry(
                                store.putVariant(requestId, variant.variant(), codec.write(requestId, variant))))
                .onFailure()
                .recoverWithItem(error -> {
                    Log.warnf(
                            "[%s] variant %d could not be recorded (%s): a redelivery would call the gateway for it"
                                    + " again",
                            requestId, variant.variant(), error.toString());
                    return null;
                });
    }

    /**
     * Records {@code event}, so that a redelivery or a duplicate replays it without a call, and returns it. A record
     * that cannot be written within the patience is logged, and the event is still returned: a redelivery would then
     * decide again (and call again).
     */
    public Uni<TerminalEvent> record(TerminalEvent event) {
        return record(event.requestId(), event);
    }

    /** {@link #record(TerminalEvent)} under the name {@code storedName} ({@code <producer>/<requestId>}, or the id). */
    public Uni<TerminalEvent> record(String storedName, TerminalEvent event) {
        return tracing.stage("ledger write", () -> patience.retry(store.putResult(storedName, codec.write(event))))
                .replaceWith(event)
                .onFailure()
                .recoverWithItem(error -> {
                    Log.warnf(
                            "[%s] the result could not be recorded (%s): a redelivery would call the gateway again",
                            event.requestId(), error.toString());
                    return event;
                });
    }
}
