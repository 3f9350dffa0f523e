package io.imageworker.gateway;

import io.imageworker.contract.Billing;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.ImageStarted;
import io.imageworker.contract.Lane;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.Patience;
import io.imageworker.support.Shutdown;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import io.opentelemetry.api.trace.Span;
import io.quarkus.arc.All;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The gateway loop of one request: call until the gateway gives an image or the retry policy gives up. Before each
 * call it waits for an open {@link GatewayGuard} (a dead token or a wrong address pauses intake instead of failing the
 * backlog) and a place in the spend budget ({@link BudgetGuard}), holding no call slot meanwhile; the call itself runs
 * within the adaptive {@link ConcurrencyLimiter}; what a failed call cost decides whether and when it is tried again
 * ({@link RetryPolicy}). Every answer is accounted once: billing, metrics, budget, limiter and guard.
 *
 * <p>Each call that leaves is told to every {@link CallListener} (the request's progress, {@code image.started}).
 *
 * <p>A {@link CallGate} decides, in its slot, right before each call leaves, whether it may: a request cancelled
 * (contract v1.2) before any of its calls left ends {@code CANCELLED} with no call, also when the cancel comes while it
 * waits for the gateway guard, the spend guard or a slot (the wait is cut short, a place taken in the budget given
 * back); once a call of the request has left, the gate lets every later one go.
 *
 * <p>Once a rebalance takes a request's partition away ({@link PlacesInProgress}), no call of it starts here and it
 * ends as {@link AbandonedException} (its record goes to the new owner), while a call in flight finishes; a rebalance
 * waits for a request only once a call of it has left.
 *
 * <p>From SIGTERM on ({@link Shutdown}) no call starts: a request that would make one, or waits for one (a pause, a
 * back-off, the budget), ends as {@link AbandonedException} and is redelivered, while a call in flight finishes. Once
 * the shutdown grace is over, a call that then fails ends the request as {@link AbandonedException} too: the failure
 * may be the shutdown's own doing, and the beans that would account for it may be gone.
 *
 * <p>Why it is longer than 400 lines: it is one job, the attempts of one variant ({@code Attempts}), whose steps
 * (the waits before a call, the call in its slot, the accounting of its answer, the decision to try again) share one
 * variant's state and each guard's exit (cancel, rebalance, shutdown); the types it is called with ({@link Call},
 * {@link CallGate}, {@link Result}) are its contract. The guards it waits for, the limiter, the policy and the
 * classification of answers are classes of their own already.
 */
@ApplicationScoped
public class GatewayCalls {

    private final GatewayClient client;
    private final GatewayGuard guard;
    private final BudgetGuard budget;
    private final ConcurrencyLimiter limiter;
    private final RetryPolicy policy;
    private final WorkerMetrics metrics;
    private final Shutdown shutdown;
    private final Tracing tracing;
    private final AnswerSizes sizes;
    private final List<CallListener> listeners;
    private final PlacesInProgress places;
    private final CallStages stages;

    GatewayCalls(
            GatewayClient client,
            GatewayGuard guard,
            BudgetGuard budget,
            ConcurrencyLimiter limiter,
            RetryPolicy policy,
            WorkerMetrics metrics,
            Shutdown shutdown,
            Tracing tracing,
            AnswerSizes sizes,
            @All List<CallListener> listeners,
            PlacesInProgress places,
            CallStages stages) {
        this.places = places;
        this.stages = stages;
        this.client = client;
        this.guard = guard;
        this.budget = budget;
        this.limiter = limiter;
        this.policy = policy;
        this.metrics = metrics;
        this.shutdown = shutdown;
        this.tracing = tracing;
        this.sizes = sizes;
        this.listeners = listeners;
    }

    /**
     * Calls the gateway with {@code call}'s {@code request}, for variant {@code variant} of {@code owner}, of {@code
     * lane} (the limiter serves the priority lane first), until it gives an image or the policy gives up; never fails but with
     * {@link AbandonedException} at shutdown. Each call is told to the {@link CallListener}s as it leaves. Each call is
     * sent only once {@code memory} holds its read window ({@link AnswerSizes#beforeCall}): while the budget is full,
     * no call is sent. The lease is admitted its answer's bytes when they arrive ({@link GatewayClient}), then holds
     * the image (or nothing after a failed call); its owner closes it when the image is stored. Each call leaves only if {@code gate} lets it:
     * otherwise the loop ends at once, with no call sent, as a {@link FailureKind#CANCELLED} failure.
     */
    public Uni<Result> call(Call call) {
        return new Attempts(call).next();
    }

    /**
     * What the calls of one variant need.
     *
     * @param owner the request they are made for
     * @param variant the variant's number
     * @param request what is sent to the gateway
     * @param lane the lane of the request (the limiter serves the priority lane first)
     * @param memory the lease that holds each call's reservation, then its answer and image
     * @param gate whether each call may leave
     */
    public record Call(
            ImageRequest owner,
            int variant,
            GatewayRequest request,
            Lane lane,
            MemoryBudget.Lease memory,
            CallGate gate) {}

    /**
     * Whether the calls of a request may leave (contract v1.2, cancellation): asked right before each call is sent,
     * and able to cut short the waits before it.
     */
    public interface CallGate {
        /** A gate that lets every call go. */
        CallGate OPEN = new CallGate() {
            @Override
            public boolean cancelled() {
                return false;
            }

            @Override
            public boolean mayCall() {
                return true;
            }

            @Override
            public <T> Uni<T> unlessCancelled(Uni<T> wait, Supplier<T> whenCancelled) {
                return wait;
            }
        };

        /** Whether the request is cancelled: no call of it will leave. Claims nothing. */
        boolean cancelled();

        /**
         * Asked in the call's slot, right before it leaves: whether it may. True once any call of the request has
         * left; false when the request was cancelled before that. Must return at once.
         */
        boolean mayCall();

        /** {@code wait}, or {@code whenCancelled}'s item if the request is cancelled meanwhile (the wait cancelled). */
        <T> Uni<T> unlessCancelled(Uni<T> wait, Supplier<T> whenCancelled);
    }

    /**
     * How the calls of one request ended.
     *
     * @param image the image the gateway gave, or null
     * @param failure why the last call gave none, or null
     * @param attempts calls made (a call that never reached the gateway's handler included)
     * @param billing what they cost
     * @param gatewayMs time spent in calls
     */
    public record Result(
            GatewayAnswer.Image image, GatewayFailure failure, int attempts, Billing billing, long gatewayMs) {}

    /** A call's exchange, over, and the call's span. */
    private record Exchanged(GatewayClient.Exchanged exchange, Span span) {
        /** The call's answer, read now (its slot given back first). */
        Uni<Sent> read() {
            return exchange.answer().map(answer -> new Sent(answer, span));
        }
    }

    /** A call's answer and the call's span. */
    private record Sent(GatewayAnswer answer, Span span) {}

    /** The gate refused a call in its slot: the request was cancelled before any of its calls left. */
    private static final class CancelledBeforeCall extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CancelledBeforeCall() {
            super("cancelled before any gateway call", null, false, false);
        }
    }

    /**
     * The call's places in the spend budget were taken in a window that has ended while it waited for its slot: sent
     * now, it would count in a window it took no place in.
     */
    private static final class PlacesOutOfDate extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PlacesOutOfDate() {
            super("budget places taken in a window that has ended", null, false, false);
        }
    }

    /** The attempts of one request: the only mutable state of the loop, confined to it. */
    private final class Attempts {
        private final ImageRequest owner;
        private final String requestId;
        private final Call call;
        private final CallGate gate;
        /** The places in the spend budget this loop holds that no call has used yet, or null. */
        private final AtomicReference<BudgetGuard.Reservation> unused = new AtomicReference<>();
        /** The places the call in flight (or just answered) used, settled by its answer. */
        private BudgetGuard.Reservation inCall = BudgetGuard.Reservation.FREE;

        private final Instant startedAt = Instant.now();
        private Billing billing = Billing.NONE;
        private int attempts;
        private int freeAttempts;
        private int unknownAttempts;
        private long gatewayMs;

        Attempts(Call call) {
            this.call = call;
            this.owner = call.owner();
            this.requestId = owner.requestId();
            this.gate = call.gate();
        }

        Uni<Result> next() {
            if (!shutdown.callsAllowed()) {
                return abandoned();
            }
            if (!places.waitsToCall(owner.storageId())) {
                return handedOver();
            }
            if (gate.cancelled()) {
                return Uni.createFrom().item(cancelled());
            }
            long queuedSince = System.nanoTime();
            // A pause or a wait for budget may last hours: the drain cuts it short, as the request would make no call,
            // and so does a cancel (a null verdict).
            return gate.unlessCancelled(
                            shutdown.unlessDraining(
                                    requestId,
                                    guard.awaitOpen()
                                            .chain(open -> budget.reserve(
                                                    owner.producerName(), places.of(owner.storageId())))),
                            () -> null)
                    .chain(reservation -> {
                        if (reservation == null) {
                            return Uni.createFrom().item(cancelled());
                        }
                        if (!reservation.granted()) {
                            return Uni.createFrom()
                                    .item(ended(GatewayFailure.noAnswer(
                                            FailureKind.BUDGET_EXCEEDED, reservation.refusal())));
                        }
                        unused.set(reservation);
                        // A cancel that comes while the call waits for its slot (or its memory) ends the wait.
                        return gate.unlessCancelled(
                                limiter.run(call.lane(), owner.producerName(), () -> readWindow()
                                                .chain(() -> send(queuedSince)))
                                        // Its slot is given back once the answer is off the connection: reading it
                                        // is CPU work, which may wait its turn on the pool.
                                        .chain(Exchanged::read)
                                        .chain(this::onAnswer)
                                        .onFailure(CancelledBeforeCall.class)
                                        .recoverWithItem(this::cancelled)
                                        // Its slot given back, it takes its places again in the current window.
                                        .onFailure(PlacesOutOfDate.class)
                                        .recoverWithUni(this::next),
                                this::cancelled);
                    });
        }

        /**
         * The call's read window reserved in the memory budget, in its slot, before it is sent: what it holds while it
         * waits for its answer ({@link AnswerSizes#beforeCall}); its answer's bytes are admitted when they arrive.
         */
        private Uni<Void> readWindow() {
            stages.move(CallStages.Stage.ENDED, CallStages.Stage.WAITING_FOR_MEMORY_TO_SEND);
            return call.memory()
                    .reserve(sizes.beforeCall(call.request().size()))
                    .onTermination()
                    .invoke(() -> stages.move(CallStages.Stage.WAITING_FOR_MEMORY_TO_SEND, CallStages.Stage.ENDED));
        }

        /**
         * The loop's end when the request is cancelled before any of its calls left: the place it took in the spend
         * budget, if any, given back (once, whichever path sees the cancel first).
         */
        private Result cancelled() {
            giveBackUnused();
            return ended(GatewayFailure.noAnswer(
                    FailureKind.CANCELLED,
                    "cancelled before any gateway call was made (a record on the cancel topic named this request)"));
        }

        /** One call, in a span of its own that {@link #onAnswer} ends once it knows what comes next. */
        private Uni<Exchanged> send(long queuedSince) {
            if (!shutdown.callsAllowed()) {
                // Draining: a call started now could be cut off by the exit, then billed again by the next worker.
                giveBackUnused();
                return abandoned();
            }
            if (!gate.mayCall()) {
                // Cancelled before any call of the request left: this one never does (cancelled() gives the place).
                return Uni.createFrom().failure(new CancelledBeforeCall());
            }
            // The call leaves: it accounts for its places in the budget (onAnswer).
            BudgetGuard.Reservation reservation = unused.getAndSet(null);
            if (reservation != null && budget.outOfDate(reservation)) {
                // Its places were taken before a window's end that came while it waited for its slot: a call counts in
                // the window it leaves in, or a cap would let through, after each window's end, every call that took
                // its place just before it. Its places given back, it claims again.
                return Uni.createFrom().failure(new PlacesOutOfDate());
            }
            if (!places.callLeaves(owner.storageId())) {
                // A rebalance is taking its partition away: the new owner makes the call, once.
                if (reservation != null) {
                    budget.settle(reservation, Billing.CallCost.NOT_SENT);
                }
                return handedOver();
            }
            inCall = reservation == null ? BudgetGuard.Reservation.FREE : reservation;
            return tracing.withRequestSpan(parent -> {
                long queuedMs = (System.nanoTime() - queuedSince) / 1_000_000;
                Span span = tracing.client(parent, "gateway call");
                span.setAttribute("http.request.method", "POST");
                span.setAttribute("server.address", client.endpoint().apiBase().getHost());
                span.setAttribute("image_worker.attempt", attempts + 1L);
                span.setAttribute("image_worker.queued_ms", queuedMs);
                span.setAttribute("image_worker.lane", call.lane().name());
                tellSent(attempts + 1, queuedMs);
                return client.exchange(call.request(), call.memory(), Tracing.traceparentOf(span))
                        .map(exchange -> new Exchanged(exchange, span));
            });
        }

        /** Tells every listener that call {@code attempt} left; a listener's failure is not the call's. */
        private void tellSent(int attempt, long queuedMs) {
            ImageStarted started = new ImageStarted(
                    requestId,
                    owner.operation().wireName(),
                    attempt,
                    owner.count() > 1 ? call.variant() : null,
                    queuedMs,
                    Instant.now(),
                    owner.metadata(),
                    owner.producer());
            for (CallListener listener : listeners) {
                try {
                    listener.sent(started, owner.storageId());
                } catch (RuntimeException e) {
                    // A progress hint never fails nor delays the call.
                    Log.debugf("[%s] a listener of its calls failed: %s", requestId, e.toString());
                }
            }
        }

        private Uni<Result> onAnswer(Sent sent) {
            GatewayAnswer answer = sent.answer();
            Span span = sent.span();
            if (answer instanceof GatewayAnswer.Image image) {
                attempts++;
                gatewayMs += answer.latencyMs();
                account(Billing.CallCost.BILLED, answer.latencyMs());
                limiter.onSuccess();
                guard.onHealthyAnswer();
                span.setAttribute("http.response.status_code", 200L);
                span.setAttribute("image_worker.cost", Billing.CallCost.BILLED.name());
                span.end();
                return Uni.createFrom().item(new Result(image, null, attempts, billing, gatewayMs));
            }
            GatewayFailure failure = ((GatewayAnswer.Failure) answer).failure();
            describe(span, failure);
            if (shutdown.abandoned()) {
                span.setAttribute("image_worker.next", "abandoned at shutdown");
                span.end();
                return abandoned();
            }
            countFailed(failure, answer.latencyMs());
            FailureKind kind = failure.kind();
            if (guard.holdsBack(failure)) {
                // A dead token or a wrong address fails every request the same way: wait for the gateway instead.
                Duration wait = policy.backoff(Math.min(attempts, 6));
                Log.warnf(
                        "[%s] %s; holding the request back (not failing it), next try in %d ms",
                        requestId, failure.message(), wait.toMillis());
                return after(span, "held back until the gateway answers as it should", wait);
            }
            Optional<Duration> delay =
                    policy.next(failure, freeAttempts, unknownAttempts, Duration.between(startedAt, Instant.now()));
            if (delay.isPresent()) {
                Log.infof(
                        "[%s] attempt %d: %s; trying again in %d ms",
                        requestId, attempts, failure.message(), delay.get().toMillis());
                return after(
                        span, "retried (" + kind.cost().name().toLowerCase(java.util.Locale.ROOT) + ")", delay.get());
            }
            Log.infof("[%s] failed after %d attempt(s): %s", requestId, attempts, failure.message());
            span.setAttribute("image_worker.next", "given up");
            span.end();
            return Uni.createFrom().item(ended(failure));
        }

        /**
         * A failed call accounted: an attempt and its cost (but a stale connection, never read by the gateway), the
         * attempts that cost nothing or whose fate is unknown (what the policy counts), and the limiter or the guard
         * told.
         */
        private void countFailed(GatewayFailure failure, long latencyMs) {
            FailureKind kind = failure.kind();
            if (kind == FailureKind.STALE_CONNECTION) {
                // Never read by the gateway: not an attempt, no cost, sent again at once.
                metrics.staleConnection();
                budget.settle(inCall, kind.cost());
            } else {
                attempts++;
                gatewayMs += latencyMs;
                account(kind.cost(), latencyMs);
            }
            switch (kind) {
                case NOT_SENT, RATE_LIMITED, STALE_CONNECTION -> freeAttempts++;
                case TIMED_OUT, UPSTREAM -> unknownAttempts++;
                default -> {}
            }
            if (kind == FailureKind.RATE_LIMITED) {
                limiter.onRateLimited();
            } else if (kind != FailureKind.NOT_SENT && kind != FailureKind.STALE_CONNECTION) {
                guard.onAnswer(failure);
            }
        }

        private Uni<Result> after(Span span, String reason, Duration delay) {
            span.setAttribute("image_worker.next", reason);
            span.setAttribute("image_worker.retry_in_ms", delay.toMillis());
            span.end();
            if (!places.waitsToCall(owner.storageId())) {
                // Its partition is being taken away: no call leaves here any more, so no back-off either.
                return handedOver();
            }
            // Unless the worker starts draining meanwhile: then the request makes no more calls.
            return shutdown.unlessDraining(requestId, Patience.after(delay, () -> Uni.createFrom()
                            .voidItem()))
                    .chain(ignored -> next());
        }

        private static void describe(Span span, GatewayFailure failure) {
            if (failure.status() != null) {
                span.setAttribute("http.response.status_code", (long) failure.status());
            }
            span.setAttribute("image_worker.failure", failure.kind().name());
            span.setAttribute("image_worker.cost", failure.kind().cost().name());
            span.setStatus(io.opentelemetry.api.trace.StatusCode.ERROR, failure.message());
        }

        private void account(Billing.CallCost cost, long latencyMs) {
            billing = billing.plus(cost);
            metrics.gatewayCall(cost, latencyMs);
            budget.settle(inCall, cost);
        }

        /** Gives back the places taken for a call that does not leave (once, whichever path comes first). */
        private void giveBackUnused() {
            BudgetGuard.Reservation reservation = unused.getAndSet(null);
            if (reservation != null) {
                budget.settle(reservation, Billing.CallCost.NOT_SENT);
            }
        }

        private Result ended(GatewayFailure failure) {
            return new Result(null, failure, attempts, billing, gatewayMs);
        }

        private <T> Uni<T> abandoned() {
            return Uni.createFrom().failure(new AbandonedException(requestId, null));
        }

        /** The end of a request whose partition a rebalance is taking away before its next call: no call leaves. */
        private <T> Uni<T> handedOver() {
            return Uni.createFrom()
                    .failure(AbandonedException.givenUp(
                            requestId,
                            "its partition went to another worker before its next gateway call; the new owner makes"
                                    + " it"));
        }
    }
}
