package io.imageworker.testing.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * Run-time controls of a running {@link GatewaySimulator}. Each change applies to calls arriving after it. Setters
 * return {@code this} so they chain. {@link GatewaySimulator#reset()} undoes all of them.
 */
public final class SimulatorControl {

    private final SimulatorState state;

    SimulatorControl(SimulatorState state) {
        this.state = state;
    }

    /** The settings now in force. */
    public SimulatorSettings settings() {
        return state.settings();
    }

    /**
     * Changes any setting, such as {@code update(s -> s.withFlavour(Flavour.OPEN_SOURCE))}; ports cannot change while
     * running and are kept. The settings tests change most often have a shortcut below.
     */
    public SimulatorControl update(UnaryOperator<SimulatorSettings> change) {
        synchronized (state) {
            SimulatorSettings current = state.settings();
            SimulatorSettings next = Objects.requireNonNull(change.apply(current), "settings");
            state.settings(next.withPort(current.port()).withFilesPort(current.filesPort()));
        }
        return this;
    }

    /** Latency of each image call from now on. */
    public SimulatorControl setLatency(Latency latency) {
        return update(s -> s.withLatency(latency));
    }

    /** A fixed latency of each image call from now on. */
    public SimulatorControl setLatency(Duration fixed) {
        return setLatency(Latency.fixed(fixed));
    }

    /** Image calls above {@code cap} in flight get 429, with {@code Retry-After} when {@code retryAfterSeconds > 0}. */
    public SimulatorControl setConcurrencyCap(int cap, int retryAfterSeconds) {
        return update(s -> s.withConcurrencyCap(cap, retryAfterSeconds));
    }

    public SimulatorControl setResponseForm(ResponseForm form) {
        return update(s -> s.withResponseForm(form));
    }

    /** The token answers 401 {@code Invalid token} on every route until {@link #restoreToken()}. */
    public SimulatorControl revokeToken() {
        state.revoked(true);
        return this;
    }

    public SimulatorControl restoreToken() {
        state.revoked(false);
        return this;
    }

    public boolean tokenRevoked() {
        return state.revoked();
    }

    /** Sets the token's remaining quota (units; 500000 per dollar). At or below 0 the token answers 401. */
    public SimulatorControl setQuotaRemaining(long units) {
        state.ledger.remaining(units);
        return this;
    }

    /** Removes the token's quota cap. */
    public SimulatorControl setUnlimitedQuota() {
        state.ledger.unlimited();
        return this;
    }

    /** Remaining quota units; {@link Long#MAX_VALUE} when unlimited. May be negative after the last call. */
    public long quotaRemaining() {
        return state.ledger.remaining();
    }

    /** Quota units billed since the last reset. */
    public long billedUnits() {
        return state.ledger.billedTotal();
    }

    /**
     * The next {@code passing} image calls that pass the gateway's checks are answered as usual; every later one is
     * held unanswered, like {@link Fault#hang()} but unbilled, until its client gives up or goes away (a worker killed)
     * or the simulator is reset. A test arranges with it what the timing of calls would leave to luck: a worker killed
     * with exactly these calls answered and the next ones in flight, however fast or loaded the machine.
     */
    public SimulatorControl holdImageCallsAfter(int passing) {
        if (passing < 0) {
            throw new IllegalArgumentException("passing must be >= 0");
        }
        state.holdAfter(passing);
        return this;
    }

    /** Image calls arriving from now on are answered again; calls held so far stay held. */
    public SimulatorControl stopHolding() {
        state.stopHolding();
        return this;
    }

    /**
     * Image calls that pass the gateway's checks from now on wait at a gate, unanswered and unbilled, until {@link
     * #openGate()}; then each goes on as it would have (its fault, the latency in force when it came, its answer). Where a fixed
     * latency would keep calls in flight while a test looks, the gate keeps them there exactly as long as it looks:
     * the test must open it before the worker's gateway timeout, as it would have to finish before a latency ran out.
     */
    public SimulatorControl closeGate() {
        state.closeGate();
        return this;
    }

    /** The image calls waiting at the gate go on, and the next ones are no longer stopped there. */
    public SimulatorControl openGate() {
        state.openGate();
        return this;
    }

    /** The next image call that passes the gateway's checks takes this fault. */
    public SimulatorControl injectFault(Fault fault) {
        return injectFault(fault, 1);
    }

    /** The next {@code times} image calls that pass the gateway's checks take this fault, after any queued. */
    public SimulatorControl injectFault(Fault fault, int times) {
        Objects.requireNonNull(fault, "fault");
        if (times < 1) {
            throw new IllegalArgumentException("times must be >= 1");
        }
        state.addFaults(fault, times);
        return this;
    }

    /** Queues these faults, one per image call, in this order. */
    public SimulatorControl injectFaults(Fault... faults) {
        for (Fault fault : faults) {
            injectFault(fault, 1);
        }
        return this;
    }

    /** Faults not yet taken, in the order they will be. */
    public List<Fault> pendingFaults() {
        return state.pendingFaults();
    }

    public SimulatorControl clearFaults() {
        state.clearFaults();
        return this;
    }
}
