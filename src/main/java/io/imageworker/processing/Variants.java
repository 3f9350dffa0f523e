package io.imageworker.processing;

import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.Lane;
import io.imageworker.contract.RequestFailure;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.contract.VariantOutcome;
import io.imageworker.gateway.GatewayCalls;
import io.imageworker.gateway.ImageReceiver;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.storage.ImageStorage;
import io.imageworker.storage.ResultLedger;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.Shutdown;
import io.smallrye.mutiny.CompositeException;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;

/**
 * The variants of one request ({@code count}, contract v1.1): a gateway loop per variant still to make, all at once,
 * each through the same gateway guard, spend guard, concurrency limit and retry policy as any call
 * ({@link GatewayCalls}); each image taken out of its answer, checked and stored under its own key; with {@code
 * count} above 1 each variant recorded in the ledger as it ends, so that a redelivery (a crash, a rebalance, a
 * duplicate) calls the gateway only for the variants without a record. A request without {@code count} is one variant,
 * stored under its contract v1 key and recorded only by its terminal event.
 */
@ApplicationScoped
class Variants {

    private final GatewayCalls gateway;
    private final ImageReceiver receiver;
    private final ImageStorage storage;
    private final ResultLedger ledger;
    private final Shutdown shutdown;
    private final MemoryBudget memory;

    Variants(
            GatewayCalls gateway,
            ImageReceiver receiver,
            ImageStorage storage,
            ResultLedger ledger,
            Shutdown shutdown,
            MemoryBudget memory) {
        this.gateway = gateway;
        this.receiver = receiver;
        this.storage = storage;
        this.ledger = ledger;
        this.shutdown = shutdown;
        this.memory = memory;
    }

    /**
     * {@code begun} with the variants an earlier attempt recorded; none for a request without {@code count}, whose
     * only record is its terminal event. Fails with {@link RequestFailure} when the records cannot be read.
     */
    Uni<RequestSoFar> recall(RequestSoFar begun) {
        if (begun.request().count() == 1) {
            return Uni.createFrom().item(begun);
        }
        return ledger.variants(begun.request().storageId()).map(begun::recalled);
    }

    /**
     * Makes every variant still to make, at once, and gives the request's terminal event. Each call that leaves is told
     * to the gateway's {@code CallListener}s ({@code image.started}). {@code gate} lets each call leave or not (a
     * request cancelled before any of its calls left: every variant ends {@code CANCELLED}).
     */
    Uni<TerminalEvent> make(RequestSoFar sized, CallPlanner.Plan plan, Lane lane, GatewayCalls.CallGate gate) {
        List<Integer> pending = sized.pending();
        if (pending.isEmpty()) {
            return Uni.createFrom().item(sized.ended(List.of()));
        }
        List<Uni<VariantOutcome>> variants = pending.stream()
                .map(number -> variant(sized, plan, number, lane, gate))
                .toList();
        // Every variant runs to its end, even when another fails: an image still coming is stored and recorded.
        return Uni.join()
                .all(variants)
                .andCollectFailures()
                .onFailure(CompositeException.class)
                .transform(Variants::unwrap)
                .map(sized::ended);
    }

    /**
     * The failure of a request whose variants failed: abandoned when one of them was (the worker drains; the request is
     * redelivered, its recorded variants replayed), else the first variant's failure.
     */
    static Throwable unwrap(Throwable failure) {
        List<Throwable> causes = ((CompositeException) failure).getCauses();
        return causes.stream()
                .filter(AbandonedException.class::isInstance)
                .findFirst()
                .orElse(causes.size() == 1 ? causes.get(0) : failure);
    }

    /**
     * One variant, its bytes held by a lease of its own in the memory budget from the reservation of its call to the
     * end of its store: no call is sent while the budget is full ({@link GatewayCalls}).
     */
    private Uni<VariantOutcome> variant(
            RequestSoFar sized, CallPlanner.Plan plan, int number, Lane lane, GatewayCalls.CallGate gate) {
        ImageRequest request = sized.request();
        return Uni.createFrom().deferred(() -> {
            MemoryBudget.Lease lease = memory.lease(MemoryBudget.Kind.CALL);
            return gateway.call(new GatewayCalls.Call(request, number, plan.request(), lane, lease, gate))
                    .chain(calls -> calls.image() == null
                            ? Uni.createFrom().item(sized.failed(number, calls))
                            : keep(sized, plan, number, calls, lease))
                    .onTermination()
                    .invoke(lease::close)
                    .chain(outcome -> {
                        if (!outcome.delivered() && shutdown.abandoned()) {
                            // A failure after the grace may be the shutdown's own: never recorded (see Shutdown).
                            return Uni.createFrom().failure(new AbandonedException(request.requestId(), null));
                        }
                        return request.count() > 1
                                ? ledger.recordVariant(request.storageId(), outcome)
                                        .replaceWith(outcome)
                                : Uni.createFrom().item(outcome);
                    });
        });
    }

    /** The image of a variant's call, taken out of its answer, checked and stored; or why it cannot be. */
    private Uni<VariantOutcome> keep(
            RequestSoFar sized,
            CallPlanner.Plan plan,
            int number,
            GatewayCalls.Result calls,
            MemoryBudget.Lease lease) {
        String requestId = sized.request().requestId();
        return Endings.orEnding(
                receiver.take(requestId, calls.image(), plan.size().sent(), lease)
                        .chain(image -> storage.store(sized.request(), number, image)
                                .map(stored -> sized.stored(number, calls, image, stored))),
                requestId,
                shutdown,
                (code, message) -> sized.failed(number, calls, code, message));
    }
}
