package io.imageworker.gateway;

import io.imageworker.config.WorkerConfig;
import io.imageworker.support.Pauses;
import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.mutiny.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;

/**
 * Stops a dead token or a wrong base address from failing the whole backlog. A 401 or a wrong-address answer
 * ({@code 404 Invalid URL}, HTML, redirect) fails every following request the same way, so after
 * {@code fault-threshold} of them in a row the guard closes: requests wait (holding no gateway permit), the
 * places of the request stream fill up and Kafka intake stops by backpressure, readiness goes down, and the gateway is
 * probed at a slow interval with calls that cannot be billed. When both probes answer as a healthy gateway does,
 * the guard opens and the waiting requests are sent again.
 *
 * <p>With {@code pause-on-gateway-fault=false} nothing waits: such requests fail with {@code UNAUTHORIZED} or
 * {@code GATEWAY_MISCONFIGURED}.
 *
 * <p>{@code image_worker_intake_paused} is 1 while paused (created at start, for alerts). A pause is one by design
 * ({@link Pauses}): the records it holds are not taken for stuck ones, however long it lasts.
 */
@ApplicationScoped
@Startup
public class GatewayGuard {

    private final boolean enabled;
    private final int threshold;
    private final long probeIntervalMs;
    private final GatewayClient gateway;
    private final Vertx vertx;
    private final Pauses pauses;
    private final List<UniEmitter<? super Boolean>> waiting = new ArrayList<>();
    private boolean open = true;
    private int faultsInRow;
    private FailureKind lastFault;
    private long probeTimer = -1;

    GatewayGuard(
            WorkerConfig config,
            GatewaySettings settings,
            GatewayClient gateway,
            Vertx vertx,
            MeterRegistry registry,
            Pauses pauses) {
        this.enabled = config.pauseOnGatewayFault();
        this.threshold = Math.max(1, settings.faultThreshold());
        this.probeIntervalMs = Math.max(100, settings.probeInterval().toMillis());
        this.gateway = gateway;
        this.vertx = vertx;
        this.pauses = pauses;
        WorkerMetrics.gauge(
                        "image_worker_intake_paused",
                        this,
                        guard -> guard.isOpen() ? 0 : 1,
                        "1 while intake is paused on a dead token or a wrong gateway address")
                .register(registry);
    }

    /** Completes at once while the gateway is usable; while paused, when it is usable again. */
    public Uni<Boolean> awaitOpen() {
        return Uni.createFrom().emitter(emitter -> {
            boolean now;
            synchronized (this) {
                now = open;
                if (!now) {
                    waiting.add(emitter);
                }
            }
            if (now) {
                emitter.complete(Boolean.TRUE);
            }
        });
    }

    /** True while intake is paused because of a gateway fault. */
    public synchronized boolean isOpen() {
        return open;
    }

    /** The fault that paused intake, or null. */
    public synchronized FailureKind pausedBy() {
        return open ? null : lastFault;
    }

    /** Whether a request that met {@code failure} waits for the gateway instead of failing. */
    public boolean holdsBack(GatewayFailure failure) {
        return enabled && isGatewayFault(failure.kind());
    }

    /** The gateway gave an image: it is healthy. */
    public synchronized void onHealthyAnswer() {
        faultsInRow = 0;
    }

    /** The gateway answered with a failure; a run of gateway faults closes the guard. */
    public void onAnswer(GatewayFailure failure) {
        boolean closeNow = false;
        synchronized (this) {
            if (!isGatewayFault(failure.kind())) {
                faultsInRow = 0;
                return;
            }
            faultsInRow++;
            lastFault = failure.kind();
            if (enabled && open && faultsInRow >= threshold) {
                open = false;
                closeNow = true;
                pauses.begin(Pauses.Reason.GATEWAY_FAULT);
            }
        }
        if (closeNow) {
            Log.errorf(
                    "Pausing intake: %d gateway calls in a row answered '%s' at %s. %s Probing every %d ms with"
                            + " unbillable calls; intake resumes by itself when the gateway answers as it should.",
                    threshold,
                    failure.message(),
                    gateway.endpoint().display(),
                    failure.kind() == FailureKind.UNAUTHORIZED
                            ? "Check the token (gateway contract §3): the Authorization header format, that the token"
                                    + " exists and is enabled, its remaining quota, then the model group."
                            : "Check the base address (gateway contract §2): IMAGE_WORKER_GATEWAY_BASE_URL must be the"
                                    + " gateway origin, with or without /v1, not a console page.",
                    probeIntervalMs);
            scheduleProbe();
        }
    }

    private static boolean isGatewayFault(FailureKind kind) {
        return kind == FailureKind.UNAUTHORIZED || kind == FailureKind.MISCONFIGURED;
    }

    private synchronized void scheduleProbe() {
        probeTimer = vertx.setTimer(probeIntervalMs, id -> probe());
    }

    /**
     * Two calls that cannot be billed: a deliberately wrong key with an empty body must get 401 (the address is an
     * API route, gateway contract §3), and the real key with an empty body on the chat route must get neither 401 nor a
     * wrong-address answer (the token is alive; the empty body is refused before any upstream work).
     */
    private void probe() {
        gateway.probe(GatewayEndpoint.CHAT, false)
                .onItem()
                .transformToUni(addressStatus -> addressStatus == 401
                        ? gateway.probe(GatewayEndpoint.CHAT, true)
                        : Uni.createFrom().item(-1))
                .subscribe()
                .with(
                        tokenStatus -> {
                            boolean healthy = tokenStatus > 0
                                    && tokenStatus != 401
                                    && tokenStatus != 404
                                    && (tokenStatus < 300 || tokenStatus >= 400);
                            if (healthy) {
                                reopen();
                            } else {
                                Log.infof(
                                        "Gateway probe: still unhealthy (%s); next probe in %d ms",
                                        tokenStatus == -1
                                                ? "the address does not answer as an API"
                                                : "token " + tokenStatus,
                                        probeIntervalMs);
                                scheduleProbe();
                            }
                        },
                        error -> {
                            Log.infof(
                                    "Gateway probe failed (%s); next probe in %d ms",
                                    error.toString(), probeIntervalMs);
                            scheduleProbe();
                        });
    }

    private void reopen() {
        List<UniEmitter<? super Boolean>> released;
        synchronized (this) {
            open = true;
            faultsInRow = 0;
            pauses.end(Pauses.Reason.GATEWAY_FAULT);
            released = new ArrayList<>(waiting);
            waiting.clear();
        }
        Log.infof(
                "The gateway answers as it should again; resuming intake and retrying %d waiting request(s)",
                released.size());
        released.forEach(emitter -> emitter.complete(Boolean.TRUE));
    }

    @PreDestroy
    synchronized void stop() {
        if (probeTimer >= 0) {
            vertx.cancelTimer(probeTimer);
        }
    }
}
