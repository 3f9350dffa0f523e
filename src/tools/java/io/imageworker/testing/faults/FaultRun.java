package io.imageworker.testing.faults;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.testing.faults.FaultScenario.Incident;
import io.imageworker.testing.gateway.Fault;
import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.ResponseForm;
import io.imageworker.testing.gateway.SimulatorControl;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.images.TestImages;
import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.WorkerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.awaitility.core.ConditionTimeoutException;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;

/**
 * The engine of the fault suite: runs one {@link FaultScenario} against the packaged worker and collects what
 * happened ({@link Outcome}); {@link FaultReport} turns it into figures. Everything runs on this machine, on
 * 127.0.0.1: an embedded Kafka broker and S3 store (in a temporary directory, deleted at the end), the gateway
 * simulator, and the worker as a child process.
 *
 * <p>On a timeline that starts with the first request: requests are published evenly over the scenario's window,
 * faults from the {@link FaultMix} are queued at a fixed rate, and each {@link Incident} happens at its offset. A
 * supervisor plays Kubernetes' liveness probe: a worker whose {@code /q/health/live} is down three times in a row,
 * or whose process ended by itself, is killed and started again (and the report says so). Then it waits, bounded, for
 * every request's terminal event and for every request record to be committed, reads every published event, and
 * reads back each stored image.
 */
public final class FaultRun {

    private static final Duration LIVENESS_PERIOD = Duration.ofSeconds(5);
    private static final int LIVENESS_FAILURES = 3;
    private static final Duration COMMIT_WAIT = Duration.ofSeconds(90);
    /** How long a token revocation waits for calls to go through it. */
    private static final Duration CALLS_WAIT = Duration.ofMinutes(2);
    /** Calls are taken as arriving when one arrived this recently. */
    private static final Duration CALLS_ARRIVING = Duration.ofMillis(500);

    private final FaultScenario scenario;
    private final Consumer<String> say;
    private final List<Happened> happened = Collections.synchronizedList(new ArrayList<>());
    private final Object workerLock = new Object();
    private final HttpClient http = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2))
            .version(HttpClient.Version.HTTP_1_1)
            .build();
    private volatile Instant origin;
    private int livenessFailures;
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Whether readiness answered 503 during the first outage of the store; null until one happened. */
    private final AtomicReference<Boolean> unreadyWhileStoreDown = new AtomicReference<>();

    private boolean supervising = true;

    private FaultRun(FaultScenario scenario, Consumer<String> say) {
        this.scenario = scenario;
        this.say = say;
    }

    /**
     * Runs {@code scenario} from start to end on servers of its own (embedded, which it stops and starts again as its
     * timeline says); {@code say} gets a line for each step.
     */
    public static Outcome run(FaultScenario scenario, Consumer<String> say) {
        return new FaultRun(scenario, say).run();
    }

    private Outcome run() {
        Path dataDir = BuildPaths.temporaryDirectory("image-worker-faults");
        long wallStart = System.nanoTime();
        try (LaunchStack stack = LaunchStack.startEmbedded(dataDir, 0, 0, simulatorSettings())) {
            WorkerProcess worker = stack.worker("fault-worker-" + scenario.name(), scenario.concurrency())
                    .env("IMAGE_WORKER_GATEWAY_TIMEOUT", millis(scenario.gatewayTimeout()))
                    .env("IMAGE_WORKER_GATEWAY_PROBE_INTERVAL", millis(scenario.probeInterval()))
                    .env("IMAGE_WORKER_SHUTDOWN_GRACE", "10s")
                    .smallJvm()
                    .build();
            try {
                say("starting the worker (log " + worker.logFile() + ")");
                worker.start();
                try (PipelineClient client = PipelineClient.on(stack);
                        PipelineClient uncommitted = PipelineClient.onUncommitted(stack)) {
                    Outcome outcome = drive(stack, worker, client, uncommitted, wallStart);
                    worker.stop();
                    return outcome;
                }
            } finally {
                worker.stop();
            }
        } finally {
            BuildPaths.deleteTree(dataDir);
        }
    }

    private Outcome drive(
            LaunchStack stack,
            WorkerProcess worker,
            PipelineClient client,
            PipelineClient uncommitted,
            long wallStart) {
        GatewaySimulator gateway = stack.gateway();
        FaultMix mix = new FaultMix(gateway, scenario);
        String runId = UUID.randomUUID().toString().substring(0, 8);
        Map<String, CompletableFuture<RecordMetadata>> sent = new ConcurrentHashMap<>();
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= scenario.requests(); i++) {
            ids.add("f-" + runId + "-" + i);
        }
        // Separate threads: a publish blocked by a broker that is down must not hold back the broker's restart.
        ScheduledExecutorService publisher = executor("fault-publisher", 1);
        ScheduledExecutorService timeline = executor("fault-timeline", 4);
        ScheduledExecutorService background = executor("fault-background", 2);
        try {
            origin = Instant.now();
            List<CompletableFuture<?>> steps = new ArrayList<>();
            long spacingNanos =
                    scenario.requests() == 1 ? 0 : scenario.publishOver().toNanos() / (scenario.requests() - 1);
            for (int i = 0; i < ids.size(); i++) {
                String id = ids.get(i);
                steps.add(at(publisher, Duration.ofNanos(spacingNanos * i), () -> sent.put(id, publish(client, id))));
            }
            ScheduledFuture<?> injector = null;
            if (scenario.faultEveryCalls() > 0) {
                injector = background.scheduleWithFixedDelay(
                        () -> guarded("fault injection", mix::tick), 100, 100, TimeUnit.MILLISECONDS);
            }
            for (Incident incident : scenario.timeline()) {
                steps.addAll(schedule(timeline, incident, stack, worker, mix));
            }
            ScheduledFuture<?> supervisor = background.scheduleWithFixedDelay(
                    () -> guarded("supervision", () -> supervise(worker)),
                    LIVENESS_PERIOD.toMillis(),
                    LIVENESS_PERIOD.toMillis(),
                    TimeUnit.MILLISECONDS);

            // The timeline: every request published, every incident over (a restarted worker may take a while).
            CompletableFuture.allOf(steps.toArray(CompletableFuture[]::new))
                    .orTimeout(
                            max(scenario.publishOver(), scenario.timelineEnd())
                                    .plusMinutes(5)
                                    .toSeconds(),
                            TimeUnit.SECONDS)
                    .exceptionally(error -> {
                        say("the timeline did not run to its end: " + error);
                        return null;
                    })
                    .join();
            if (injector != null) {
                injector.cancel(false);
            }
            say("timeline over after " + elapsed() + "; waiting for every request's terminal event");
            Map<String, RecordMetadata> published = new LinkedHashMap<>();
            for (String id : ids) {
                try {
                    published.put(id, sent.get(id).get(60, TimeUnit.SECONDS));
                } catch (ExecutionException | TimeoutException | RuntimeException e) {
                    say("request " + id + " could not be published: " + e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
            awaitQuietly("a terminal event for each request", scenario.settleTimeout(), () -> client.results().stream()
                    .map(PipelineClient.Result::requestId)
                    .collect(Collectors.toSet())
                    .containsAll(published.keySet()));
            boolean committed = awaitQuietly("every request record committed", COMMIT_WAIT, stack::allCommitted);
            Map<TopicPartition, Long> ends = resultEnds(stack);
            awaitQuietly(
                    "every published event read",
                    Duration.ofSeconds(30),
                    () -> client.caughtUpTo(ends) && uncommitted.caughtUpTo(ends));
            supervisor.cancel(false);
            synchronized (workerLock) {
                // Waits for a supervision step in progress; none acts after this.
                supervising = false;
            }
            boolean readyAtEnd = worker.isAlive() && worker.isReady();
            List<RecordedCall> calls = gateway.imageCalls();
            List<PipelineClient.Result> results = client.results().stream()
                    .filter(result -> published.containsKey(result.requestId()))
                    .toList();
            Map<String, StoredObject> objects = readObjects(stack, results);
            say("collected " + results.size() + " events, " + calls.size() + " gateway calls and " + objects.size()
                    + " stored objects after " + elapsed());
            return new Outcome(
                    scenario,
                    origin,
                    ids,
                    published,
                    results,
                    uncommitted.results().stream()
                            .filter(result -> published.containsKey(result.requestId()))
                            .toList(),
                    calls,
                    objects,
                    List.copyOf(happened),
                    gateway.maxConcurrentImageCalls(),
                    worker.starts(),
                    committed,
                    readyAtEnd,
                    Optional.ofNullable(unreadyWhileStoreDown.get()),
                    worker.logFile(),
                    Duration.ofNanos(System.nanoTime() - wallStart));
        } finally {
            publisher.shutdownNow();
            timeline.shutdownNow();
            background.shutdownNow();
        }
    }

    private static ScheduledExecutorService executor(String name, int threads) {
        return Executors.newScheduledThreadPool(threads, runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        });
    }

    private CompletableFuture<RecordMetadata> publish(PipelineClient client, String id) {
        return client.sendAsync(
                id, PipelineClient.request(id, "a lighthouse at dusk, fault suite", "\"size\":\"1024x1024\""));
    }

    /**
     * The steps of one incident, each scheduled at its offset and run in order; the futures complete when each step
     * is done.
     */
    private List<CompletableFuture<?>> schedule(
            ScheduledExecutorService timeline,
            Incident incident,
            LaunchStack stack,
            WorkerProcess worker,
            FaultMix mix) {
        SimulatorControl control = stack.gateway().control();
        Duration end = incident.at().plus(incident.length());
        Happening happening = new Happening(incident);
        if (incident instanceof Incident.WorkerKill) {
            return List.of(at(timeline, incident.at(), () -> killAndRestart(worker, incident)));
        }
        if (incident instanceof Incident.BrokerOutage || incident instanceof Incident.StoreOutage) {
            boolean broker = incident instanceof Incident.BrokerOutage;
            String server = broker ? "the Kafka broker" : "the object store";
            CompletableFuture<Void> down = at(timeline, incident.at(), () -> {
                happening.start();
                say("stopping " + server);
                if (broker) {
                    stack.infrastructure().kafka().stop();
                } else {
                    stack.infrastructure().s3().stop();
                }
                say(server + " is down");
            });
            CompletableFuture<Void> up = after(down, timeline, end, () -> {
                if (!broker) {
                    // Readiness follows the store (the pod leaves the Service's endpoints); liveness does not (the
                    // supervisor's restarts must stay at zero). The store stays down until the worker's readiness
                    // said so, within a bound: on a busy machine the worker may still be restarting after its kill
                    // when the planned outage ends.
                    boolean unready = awaitQuietly(
                            "the worker's readiness down while the store is down",
                            CALLS_WAIT,
                            () -> storeCheckDown(worker));
                    unreadyWhileStoreDown.compareAndSet(null, unready);
                    say(unready ? "the worker is not ready while the store is down" : "the worker stayed ready");
                }
                if (broker) {
                    stack.infrastructure().kafka().start();
                } else {
                    stack.infrastructure().s3().start();
                }
                happening.end();
                say(server + " started again");
            });
            return List.of(down, up);
        }
        if (incident instanceof Incident.TokenRevoked revoked) {
            CompletableFuture<Void> quiet =
                    at(timeline, max(Duration.ZERO, revoked.at().minusSeconds(2)), mix::hold);
            CompletableFuture<Void> revoke = after(quiet, timeline, revoked.at(), () -> {
                // A revocation that no call goes through tests nothing: on a busy machine the worker may still be
                // restarting, or waiting for the broker, at the planned moment. The window starts with calls going:
                // one in flight is not enough (it passed the token check when it arrived, and with the broker still
                // down no call may follow it; a run under load saw the broker take 13 s to restart and 0 answers
                // 401), so a call must also have arrived a moment ago.
                awaitQuietly(
                        "image calls arriving before the token is revoked",
                        CALLS_WAIT,
                        () -> stack.gateway().imageCallsInFlight() > 0
                                && arrivedSince(stack.gateway(), Instant.now().minus(CALLS_ARRIVING)));
                happening.start();
                control.revokeToken();
                say("token revoked");
            });
            CompletableFuture<Void> restore = later(revoke, timeline, revoked.length(), () -> {
                // Nor does one that no call reached before it ended: on a machine busy enough, the worker's next call
                // came after the planned length (a run with two suites side by side saw 0 answers 401). It stays
                // revoked until a call was answered 401, within a bound.
                awaitQuietly(
                        "a call answered 401 before the token is restored",
                        CALLS_WAIT,
                        () -> stack.gateway().imageCalls().stream().anyMatch(call -> call.status() == 401));
                control.restoreToken();
                happening.end();
                say("token restored");
            });
            // The timeline does not wait for the resume: when its other steps are over first, the injection ends with
            // it, and no fault was to come before the resume either. Waiting for it only idled (in FaultSuiteIT's
            // scenario, 14 s after the store was back).
            later(restore, timeline, revoked.quietAfter(), () -> {
                mix.release();
                say("fault injection resumes");
            });
            return List.of(quiet, revoke, restore);
        }
        if (incident instanceof Incident.RateLimitCap cap) {
            CompletableFuture<Void> on = at(timeline, cap.at(), () -> {
                happening.start();
                control.setConcurrencyCap(cap.cap(), cap.retryAfterSeconds());
                say("429 storm: calls above " + cap.cap() + " in flight refused");
            });
            return List.of(on, after(on, timeline, end, () -> {
                control.setConcurrencyCap(0, 0);
                happening.end();
                say("429 storm over");
            }));
        }
        if (incident instanceof Incident.RateLimitBurst burst) {
            return List.of(at(timeline, burst.at(), () -> {
                happening.start();
                Fault fault = burst.retryAfterSeconds() > 0
                        ? Fault.rateLimited(burst.retryAfterSeconds())
                        : Fault.rateLimited();
                control.injectFault(fault, burst.count());
                happening.end();
                say("429 storm: the next " + burst.count() + " calls are answered 429");
            }));
        }
        throw new IllegalArgumentException("not an incident of a timeline: " + incident);
    }

    /** Whether an image call arrived at {@code gateway} after {@code since}. */
    private static boolean arrivedSince(GatewaySimulator gateway, Instant since) {
        return gateway.imageCalls().stream().anyMatch(call -> call.arrivedAt().isAfter(since));
    }

    private void killAndRestart(WorkerProcess worker, Incident incident) {
        synchronized (workerLock) {
            Happening happening = new Happening(incident);
            happening.start();
            say("killing the worker (SIGKILL)");
            worker.kill();
            startAgain(worker);
            happening.end();
            say("worker ready again");
        }
    }

    /** Plays the liveness probe: restarts a worker that is not live three times in a row, or whose process ended. */
    private void supervise(WorkerProcess worker) {
        synchronized (workerLock) {
            if (!supervising) {
                return;
            }
            boolean live = worker.isAlive() && isLive(worker);
            livenessFailures = live ? 0 : livenessFailures + 1;
            if (!worker.isAlive() || livenessFailures >= LIVENESS_FAILURES) {
                Happening happening =
                        new Happening(new Incident.LivenessRestart(Duration.between(origin, Instant.now())));
                happening.start();
                say("the worker is not live (" + (worker.isAlive() ? "liveness down" : "process ended")
                        + "): restarting it, as the liveness probe would; see " + worker.logFile());
                worker.kill();
                startAgain(worker);
                livenessFailures = 0;
                happening.end();
            }
        }
    }

    private void startAgain(WorkerProcess worker) {
        try {
            worker.start();
        } catch (IllegalStateException first) {
            say("the worker did not start (" + first.getMessage() + "); trying once more");
            worker.start();
        }
    }

    /**
     * Whether the worker's {@code /q/health/ready} answers 503 with its object-store check down (not only another
     * check, such as the pause on a revoked token); false when it does not answer within 3 s.
     */
    private boolean storeCheckDown(WorkerProcess worker) {
        try {
            HttpResponse<String> answer = http.send(
                    HttpRequest.newBuilder(worker.readyUrl())
                            .timeout(Duration.ofSeconds(3))
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() != 503) {
                return false;
            }
            for (JsonNode check : JSON.readTree(answer.body()).path("checks")) {
                if (check.path("name").asText().equals("object-store")) {
                    return check.path("status").asText().equals("DOWN");
                }
            }
            return false;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private boolean isLive(WorkerProcess worker) {
        URI live = URI.create("http://127.0.0.1:" + worker.port() + "/q/health/live");
        try {
            return http.send(
                                    HttpRequest.newBuilder(live)
                                            .timeout(Duration.ofSeconds(3))
                                            .GET()
                                            .build(),
                                    HttpResponse.BodyHandlers.discarding())
                            .statusCode()
                    == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    /** Runs {@code step} at {@code offset} from the origin; its failure is reported and completes the future. */
    private CompletableFuture<Void> at(ScheduledExecutorService executor, Duration offset, Runnable step) {
        return after(null, executor, offset, step);
    }

    /**
     * Runs {@code step} at {@code offset} from the origin, but not before {@code previous} (a step of the same
     * incident, which a busy machine may have delayed) is done.
     */
    private CompletableFuture<Void> after(
            CompletableFuture<?> previous, ScheduledExecutorService executor, Duration offset, Runnable step) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        long delay =
                Math.max(0, Duration.between(Instant.now(), origin.plus(offset)).toMillis());
        executor.schedule(
                () -> {
                    try {
                        if (previous != null) {
                            previous.exceptionally(error -> null).join();
                        }
                        step.run();
                        done.complete(null);
                    } catch (RuntimeException e) {
                        say("a step of the timeline failed: " + e);
                        done.completeExceptionally(e);
                    }
                },
                delay,
                TimeUnit.MILLISECONDS);
        return done;
    }

    /** Runs {@code step} {@code delay} after {@code previous} is done (however late that was). */
    private CompletableFuture<Void> later(
            CompletableFuture<?> previous, ScheduledExecutorService executor, Duration delay, Runnable step) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        previous.whenComplete((ignored, error) -> executor.schedule(
                () -> {
                    try {
                        step.run();
                        done.complete(null);
                    } catch (RuntimeException e) {
                        say("a step of the timeline failed: " + e);
                        done.completeExceptionally(e);
                    }
                },
                delay.toMillis(),
                TimeUnit.MILLISECONDS));
        return done;
    }

    private void guarded(String what, Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            say(what + " failed: " + e);
        }
    }

    /** Each stored object named by a completed event, read back once. */
    private Map<String, StoredObject> readObjects(LaunchStack stack, List<PipelineClient.Result> results) {
        Map<String, StoredObject> objects = new HashMap<>();
        try (S3AsyncClient s3 = stack.infrastructure().s3().newAsyncClient()) {
            for (PipelineClient.Result result : results) {
                if (!result.completed() || result.imageKey() == null) {
                    continue;
                }
                String bucket = result.text("image", "bucket");
                String key = result.imageKey();
                objects.computeIfAbsent(bucket + "/" + key, ignored -> readObject(s3, bucket, key));
            }
        }
        return objects;
    }

    private static StoredObject readObject(S3AsyncClient s3, String bucket, String key) {
        try {
            byte[] bytes = s3.getObject(get -> get.bucket(bucket).key(key), AsyncResponseTransformer.toBytes())
                    .get(30, TimeUnit.SECONDS)
                    .asByteArray();
            return new StoredObject(bucket, key, true, TestImages.sha256(bytes), bytes.length);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof NoSuchKeyException) {
                return new StoredObject(bucket, key, false, null, 0);
            }
            throw new IllegalStateException("cannot read " + bucket + "/" + key + ": " + e.getCause(), e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("cannot read " + bucket + "/" + key + " within 30 s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private boolean awaitQuietly(String what, Duration atMost, java.util.concurrent.Callable<Boolean> condition) {
        try {
            await(what)
                    .atMost(atMost)
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .until(condition);
            return true;
        } catch (ConditionTimeoutException e) {
            say("gave up waiting for " + what + " after " + atMost.toSeconds() + " s");
            return false;
        }
    }

    private SimulatorSettings simulatorSettings() {
        return SimulatorSettings.defaults()
                .withLatency(scenario.latency())
                .withResponseForm(ResponseForm.MIXED, scenario.urlRatio())
                .withQuota(SimulatorSettings.UNLIMITED_QUOTA);
    }

    private void say(String line) {
        say.accept(String.format("[%7s] %s", origin == null ? "-" : elapsed(), line));
    }

    private String elapsed() {
        return String.format("%.1f s", Duration.between(origin, Instant.now()).toMillis() / 1e3);
    }

    /** How many events the result topics hold; more than any count when the broker does not say. */
    private Map<TopicPartition, Long> resultEnds(LaunchStack stack) {
        try {
            return stack.resultEnds();
        } catch (RuntimeException e) {
            say("cannot read the end offsets of the result topics: " + e);
            return Map.of(new TopicPartition("unknown", 0), Long.MAX_VALUE);
        }
    }

    private static String millis(Duration duration) {
        return duration.toMillis() + "ms";
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    /** An incident as it happened, for {@link Happened}. */
    private final class Happening {
        private final Incident incident;
        private Instant start;

        Happening(Incident incident) {
            this.incident = incident;
        }

        void start() {
            start = Instant.now();
        }

        void end() {
            happened.add(new Happened(incident, start, Instant.now()));
        }
    }

    /**
     * An incident as it happened.
     *
     * @param incident what it was
     * @param start when it began (for a kill, the SIGKILL)
     * @param end when it was over (for a kill, when the new worker was ready)
     */
    public record Happened(Incident incident, Instant start, Instant end) {

        /** Whether it killed a worker: a planned SIGKILL or a liveness restart. */
        public boolean killedWorker() {
            return incident instanceof Incident.WorkerKill || incident instanceof Incident.LivenessRestart;
        }
    }

    /**
     * A stored object read back.
     *
     * @param present whether it exists
     * @param sha256 its bytes' SHA-256, hex
     * @param bytes its length
     */
    public record StoredObject(String bucket, String key, boolean present, String sha256, long bytes) {}

    /**
     * Everything a run observed.
     *
     * @param scenario what was run
     * @param origin when the first request was due
     * @param requestIds every request id, in publishing order
     * @param published the requests the broker acknowledged, with where they went
     * @param events every terminal event of these requests, in arrival order, as a {@code read_committed} consumer
     *     reads them
     * @param uncommittedEvents the same, as a {@code read_uncommitted} consumer reads them (aborted transactions too)
     * @param calls every image call the gateway saw
     * @param objects each stored object named by a completed event, by {@code bucket/key}
     * @param happened the incidents as they happened
     * @param peak the most image calls the gateway saw at once
     * @param workerStarts how many times a worker process was started
     * @param allCommitted whether every request record was committed at the end
     * @param readyAtEnd whether the worker was ready at the end
     * @param unreadyWhileStoreDown whether its readiness answered 503 while the store was down (the first outage of
     *     the store), empty when the timeline stopped no store
     * @param workerLog the worker's log file
     * @param wall time from the start of the infrastructure to the end of collection
     */
    public record Outcome(
            FaultScenario scenario,
            Instant origin,
            List<String> requestIds,
            Map<String, RecordMetadata> published,
            List<PipelineClient.Result> events,
            List<PipelineClient.Result> uncommittedEvents,
            List<RecordedCall> calls,
            Map<String, StoredObject> objects,
            List<Happened> happened,
            int peak,
            int workerStarts,
            boolean allCommitted,
            boolean readyAtEnd,
            Optional<Boolean> unreadyWhileStoreDown,
            Path workerLog,
            Duration wall) {

        /** The request ids the broker acknowledged. */
        public Set<String> publishedIds() {
            return published.keySet();
        }
    }
}
