package io.imageworker.gateway;

import io.imageworker.Billing;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.Patience;
import io.imageworker.support.Shutdown;
import io.imageworker.support.WorkerMetrics;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The gateway loop of one request: call until the gateway gives an image or the retry policy gives up. Before each
 * call it waits for an open {@link GatewayGuard} (a dead token or a wrong address pauses intake instead of failing the
 * backlog) and a place in the spend budget ({@link BudgetGuard}), holding no call slot meanwhile; the call itself runs
 * within the adaptive {@link ConcurrencyLimiter}; what a failed call cost decides whether and when it is tried again
 * ({@link RetryPolicy}). Every answer is accounted once: billing, metrics, budget, limiter and guard.
 *
 * <p>From SIGTERM on ({@link Shutdown}) no call starts: a request that would make one, or waits for one (a pause, a
 * back-off, the budget), ends as {@link AbandonedException} and is redelivered, while a call in flight finishes. Once
 * the shutdown grace is over, a call that then fails ends the request as {@link AbandonedException} too: the failure
 * may be the shutdown's own doing, and the beans that would account for it may be gone.
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

    GatewayCalls(
            GatewayClient client,
            GatewayGuard guard,
            BudgetGuard budget,
            ConcurrencyLimiter limiter,
            RetryPolicy policy,
            WorkerMetrics metrics,
            Shutdown shutdown) {
        this.client = client;
        this.guard = guard;
        this.budget = budget;
        this.limiter = limiter;
        this.policy = policy;
        this.metrics = metrics;
        this.shutdown = shutdown;
    }

    /**
     * Calls the gateway with {@code request} until it gives an image or the policy gives up; never fails but with
     * {@link AbandonedException} at shutdown.
     */
    public Uni<Result> call(String requestId, GatewayRequest request) {
        return new Attempts(requestId, request).next();
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

    /** The attempts of one request: the only mutable state of the loop, confined to it. */
    private final class Attempts {
        private final String requestId;
        private final GatewayRequest request;
        private final Instant startedAt = Instant.now();
        private Billing billing = Billing.NONE;
        private int attempts;
        private int freeAttempts;
        private int unknownAttempts;
        private long gatewayMs;

        Attempts(String requestId, GatewayRequest request) {
            this.requestId = requestId;
            this.request = request;
        }

        Uni<Result> next() {
            if (!shutdown.callsAllowed()) {
                return abandoned();
            }
            // A pause or a wait for budget may last hours: the drain cuts it short, as the request would make no call.
            return shutdown.unlessDraining(requestId, guard.awaitOpen().chain(open -> budget.reserve()))
                    .chain(allowed -> allowed
                            ? limiter.run(this::send).chain(this::onAnswer)
                            : Uni.createFrom()
                                    .item(ended(GatewayFailure.noAnswer(
                                            FailureKind.BUDGET_EXCEEDED,
                                            "the spend guard allows no more gateway calls in this window"
                                                    + " (IMAGE_WORKER_BUDGET_MAX_CALLS)"))));
        }

        private Uni<GatewayAnswer> send() {
            if (!shutdown.callsAllowed()) {
                // Draining: a call started now could be cut off by the exit, then billed again by the next worker.
                budget.settle(Billing.CallCost.NOT_SENT);
                return abandoned();
            }
            return client.send(request);
        }

        /** {@link #next()} after {@code wait}, unless the worker starts draining meanwhile. */
        private Uni<Result> nextAfter(Duration wait) {
            return shutdown.unlessDraining(requestId, Patience.after(wait, () -> Uni.createFrom()
                            .voidItem()))
                    .chain(ignored -> next());
        }

        private Uni<Result> onAnswer(GatewayAnswer answer) {
            if (answer instanceof GatewayAnswer.Image image) {
                attempts++;
                gatewayMs += answer.latencyMs();
                account(Billing.CallCost.BILLED, answer.latencyMs());
                limiter.onSuccess();
                guard.onHealthyAnswer();
                return Uni.createFrom().item(new Result(image, null, attempts, billing, gatewayMs));
            }
            if (shutdown.abandoned()) {
                return abandoned();
            }
            GatewayFailure failure = ((GatewayAnswer.Failure) answer).failure();
            FailureKind kind = failure.kind();
            if (kind == FailureKind.STALE_CONNECTION) {
                // Never read by the gateway: not an attempt, no cost, sent again at once.
                metrics.staleConnection();
                budget.settle(kind.cost());
            } else {
                attempts++;
                gatewayMs += answer.latencyMs();
                account(kind.cost(), answer.latencyMs());
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
            if (guard.holdsBack(failure)) {
                // A dead token or a wrong address fails every request the same way: wait for the gateway instead.
                Duration wait = policy.backoff(Math.min(attempts, 6));
                Log.warnf(
                        "[%s] %s; holding the request back (not failing it), next try in %d ms",
                        requestId, failure.message(), wait.toMillis());
                return nextAfter(wait);
            }
            Optional<Duration> delay =
                    policy.next(failure, freeAttempts, unknownAttempts, Duration.between(startedAt, Instant.now()));
            if (delay.isPresent()) {
                Log.infof(
                        "[%s] attempt %d: %s; trying again in %d ms",
                        requestId, attempts, failure.message(), delay.get().toMillis());
                return nextAfter(delay.get());
            }
            Log.infof("[%s] failed after %d attempt(s): %s", requestId, attempts, failure.message());
            return Uni.createFrom().item(ended(failure));
        }

        private void account(Billing.CallCost cost, long latencyMs) {
            billing = billing.plus(cost);
            metrics.gatewayCall(cost, latencyMs);
            budget.settle(cost);
        }

        private Result ended(GatewayFailure failure) {
            return new Result(null, failure, attempts, billing, gatewayMs);
        }

        private <T> Uni<T> abandoned() {
            return Uni.createFrom().failure(new AbandonedException(requestId, null));
        }
    }
}
