package io.imageworker.testing.gateway;

import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/** Everything the simulator remembers; shared by the event loops and the test thread, so every part is thread-safe. */
final class SimulatorState {

    private static final DateTimeFormatter REQUEST_ID_TIME =
            DateTimeFormatter.ofPattern("yyyyMMddHHmmss").withZone(ZoneOffset.UTC);
    private static final String BUILD_HASH = "5a1e7c0d";
    private static final String ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    private final SimulatorSettings initial;
    private volatile SimulatorSettings settings;
    private final SecureRandom random = new SecureRandom();

    final Ledger ledger = new Ledger();
    final FileOrigin files = new FileOrigin();
    final Connections connections = new Connections();
    private final AtomicBoolean revoked = new AtomicBoolean();
    private final Deque<Fault> faults = new ArrayDeque<>();
    private final List<CallEntry> calls = new ArrayList<>();
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong epoch = new AtomicLong();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();
    /** Image calls still let through before the rest are held; negative while nothing is held. */
    private final AtomicInteger passingBeforeHold = new AtomicInteger(-1);

    /** Whether image calls wait at the gate; those waiting, each as what lets it go on. */
    private final Object gateLock = new Object();

    private boolean gateClosed;
    private final List<Runnable> atTheGate = new ArrayList<>();

    private final AtomicLong mixedCounter = new AtomicLong();
    private final Set<GatewayHandler.Exchange> hanging = ConcurrentHashMap.newKeySet();

    SimulatorState(SimulatorSettings initial) {
        this.initial = initial;
        this.settings = initial;
        ledger.reset(initial);
    }

    SimulatorSettings initial() {
        return initial;
    }

    SimulatorSettings settings() {
        return settings;
    }

    void settings(SimulatorSettings value) {
        settings = value;
    }

    long epoch() {
        return epoch.get();
    }

    boolean revoked() {
        return revoked.get();
    }

    void revoked(boolean value) {
        revoked.set(value);
    }

    /** A request id in new-api's form: UTC time, nanoseconds, build hash, 8 random characters. */
    String newRequestId() {
        Instant now = Instant.now();
        StringBuilder id = new StringBuilder(REQUEST_ID_TIME.format(now))
                .append(now.getNano())
                .append(BUILD_HASH);
        for (int i = 0; i < 8; i++) {
            id.append(ALPHANUMERIC.charAt(random.nextInt(ALPHANUMERIC.length())));
        }
        return id.toString();
    }

    CallEntry record(String requestId, String method, String path, int concurrency) {
        synchronized (calls) {
            CallEntry entry = new CallEntry(new CallEntry.Arrival(
                    sequence.incrementAndGet(), requestId, method, path, concurrency, Instant.now()));
            calls.add(entry);
            return entry;
        }
    }

    List<RecordedCall> calls(Predicate<RecordedCall> filter) {
        List<CallEntry> copy;
        synchronized (calls) {
            copy = List.copyOf(calls);
        }
        return copy.stream().map(CallEntry::snapshot).filter(filter).toList();
    }

    /** An image call arrives: the number in flight, itself included. */
    int enterImageCall() {
        int now = inFlight.incrementAndGet();
        peak.accumulateAndGet(now, Math::max);
        return now;
    }

    void leaveImageCall() {
        inFlight.decrementAndGet();
    }

    int inFlight() {
        return inFlight.get();
    }

    int peak() {
        return peak.get();
    }

    void addFaults(Fault fault, int times) {
        synchronized (faults) {
            for (int i = 0; i < times; i++) {
                faults.addLast(fault);
            }
        }
    }

    Fault takeFault() {
        synchronized (faults) {
            return faults.pollFirst();
        }
    }

    List<Fault> pendingFaults() {
        synchronized (faults) {
            return List.copyOf(faults);
        }
    }

    void clearFaults() {
        synchronized (faults) {
            faults.clear();
        }
    }

    /** B64 or URL for the next success; MIXED spreads URL answers evenly at the configured ratio. */
    ResponseForm nextForm(SimulatorSettings s) {
        if (s.responseForm() != ResponseForm.MIXED) {
            return s.responseForm();
        }
        long k = mixedCounter.getAndIncrement();
        boolean url = Math.floor((k + 1) * s.urlRatio()) > Math.floor(k * s.urlRatio());
        return url ? ResponseForm.URL : ResponseForm.B64;
    }

    /** From now on, {@code passing} more image calls go through and every later one is held. */
    void holdAfter(int passing) {
        passingBeforeHold.set(passing);
    }

    /** Image calls go through again (those held stay held until their client goes or the simulator is reset). */
    void stopHolding() {
        passingBeforeHold.set(-1);
    }

    /** Whether this image call is held: a hold is set and the calls it lets through are used up. */
    boolean holdsNext() {
        return passingBeforeHold.getAndUpdate(left -> left > 0 ? left - 1 : left) == 0;
    }

    /** Image calls that pass the gateway's checks wait at the gate from now on, until {@link #openGate()}. */
    void closeGate() {
        synchronized (gateLock) {
            gateClosed = true;
        }
    }

    /**
     * Whether this image call waits at the gate: if it is closed, {@code goOn} is kept and run when it opens, and the
     * call is left unanswered meanwhile.
     */
    boolean waitsAtTheGate(Runnable goOn) {
        synchronized (gateLock) {
            if (gateClosed) {
                atTheGate.add(goOn);
            }
            return gateClosed;
        }
    }

    /** Opens the gate: the image calls waiting at it go on, in the order they came, and later ones pass. */
    void openGate() {
        List<Runnable> waiting;
        synchronized (gateLock) {
            gateClosed = false;
            waiting = List.copyOf(atTheGate);
            atTheGate.clear();
        }
        waiting.forEach(Runnable::run);
    }

    void hanging(GatewayHandler.Exchange exchange, boolean add) {
        if (add) {
            hanging.add(exchange);
        } else {
            hanging.remove(exchange);
        }
    }

    /** Ends the calls left hanging: they leave the in-flight count and their connections are closed. */
    void abandonHanging() {
        for (GatewayHandler.Exchange exchange : List.copyOf(hanging)) {
            exchange.abandon();
        }
        files.reset();
    }

    /** Back to the start settings, with no records, faults, bills or peak. */
    void reset() {
        epoch.incrementAndGet();
        abandonHanging();
        settings = initial;
        revoked.set(false);
        ledger.reset(initial);
        clearFaults();
        stopHolding();
        // Calls a test left at the gate are answered (with the settings just restored), not left to time out.
        openGate();
        mixedCounter.set(0);
        connections.reset();
        synchronized (calls) {
            calls.clear();
            sequence.set(0);
        }
        peak.set(inFlight.get());
    }
}
