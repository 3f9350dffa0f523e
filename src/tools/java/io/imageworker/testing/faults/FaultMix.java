package io.imageworker.testing.faults;

import io.imageworker.testing.gateway.Fault;
import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.SimulatorControl;
import java.util.List;
import java.util.Random;
import java.util.function.IntSupplier;

/**
 * The faults injected continuously during a run: one in every {@code everyCalls} image calls takes a fault, drawn
 * (seeded) from 5xx (500, 502, 503), hangs, truncated bodies and expired URLs. Counted in calls rather than in time,
 * so that the share of faulty calls stays the same when the worker slows down (after a 429 storm its adaptive limit
 * is low): a fault rate per second would then hit every call. 429s come as storms, on the scenario's timeline. While
 * {@link #hold()} is in force nothing is queued.
 */
final class FaultMix {

    private static final List<Fault> WEIGHTED = List.of(
            Fault.serverError(500),
            Fault.serverError(500),
            Fault.serverError(502),
            Fault.serverError(503),
            Fault.hang(),
            Fault.hang(),
            Fault.truncatedBody(),
            Fault.truncatedBody(),
            Fault.expiredUrl(),
            Fault.expiredUrl());

    private final SimulatorControl control;
    private final IntSupplier calls;
    private final int everyCalls;
    private final Random random;
    private int holds;
    private int callsAtLastFault;

    /** The mix of {@code scenario} ({@link FaultScenario#faultEveryCalls()}, its seed) for the calls {@code gateway} sees. */
    FaultMix(GatewaySimulator gateway, FaultScenario scenario) {
        this.control = gateway.control();
        this.calls = () -> gateway.imageCalls().size();
        this.everyCalls = scenario.faultEveryCalls();
        this.random = new Random(scenario.seed());
    }

    /** Queues one fault when {@code everyCalls} calls went by since the last and none waits; called often. */
    synchronized void tick() {
        int seen = calls.getAsInt();
        if (holds > 0
                || seen - callsAtLastFault < everyCalls
                || !control.pendingFaults().isEmpty()) {
            return;
        }
        control.injectFault(WEIGHTED.get(random.nextInt(WEIGHTED.size())));
        callsAtLastFault = seen;
    }

    /** Stops queuing faults, and drops those waiting, until as many {@link #release()} calls. */
    synchronized void hold() {
        holds++;
        control.clearFaults();
    }

    /** Ends one {@link #hold()}; the count of calls starts again from here. */
    synchronized void release() {
        holds--;
        callsAtLastFault = calls.getAsInt();
    }
}
