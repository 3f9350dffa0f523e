package io.imageworker.testing.launch;

import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.infra.Infrastructure;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;

/**
 * Throughput and cost of the packaged worker, and of a yardstick run the same way, in the regimes that matter: starts
 * an embedded broker and S3 server (in a temporary directory, deleted at the end) once, then for each regime and
 * round a fresh gateway simulator, fresh topics and consumer group, and each contestant in turn (the worker, then the
 * yardstick in odd rounds, the other way round in even ones); publishes N generate requests as fast as the producer goes, waits for N terminal events and
 * prints the figures, then a table of every run.
 *
 * <p>Regimes ({@code -Dbench.regime=latency,cpu} or {@code all}):
 *
 * <ul>
 *   <li>{@code latency}: 640 requests, concurrency 64, the gateway answers after 2 s with a small PNG;
 *   <li>{@code latency-burn}: the same, the gateway also spending 20 ms of CPU per answer as a real one renders, so
 *       that the worker's own CPU cost shows (the stand-in shares this machine's cores);
 *   <li>{@code concurrency}: 5000 requests, concurrency 500, 2 s, answers of about 6 KB;
 *   <li>{@code cpu}: 3000 requests, concurrency 64, no latency, 2 MB PNGs as {@code b64_json};
 *   <li>{@code cold-latency}, {@code cold-concurrency}: {@code latency} and {@code concurrency} as a scale-out meets
 *       them (issue 30): the requests are published first, as the lag that starts a replica, then a fresh JVM of each
 *       contestant is launched, with no warm-up; the clock starts at the launch, so the wall time and the time to the
 *       first result include the start, and the CPU is the process's from its first instruction. The worker runs
 *       twice, as the image starts it: with the AOT cache the {@code aot} profile trained ({@code image-worker},
 *       {@code -XX:AOTCache}; {@code bench.aot-cache} names another) and without it ({@code image-worker-no-cache}).
 *       The cache is only used by the JVM that trained it: run the benchmark, and the yardstick, on that JDK 25
 *       ({@code ./mvnw -Paot,bench} with {@code JAVA_HOME} on it). Not in {@code all}.
 *   <li>{@code huge}: 400 requests of {@code "size": "2048x2048"}, concurrency 16, no latency, 2048x2048 PNGs of
 *       about 9.4 MB as {@code b64_json} (12.5 MB answers), both contestants with a 512 MB heap: whether the bytes in
 *       flight, not only the calls, are bounded (issue 17). Only 32 warm-up requests (see {@link #HUGE}); {@code
 *       -Dbench.concurrency=64 -Dbench.worker-jvm-options="-Xmx1g ..."} runs its larger variant. Not in {@code all}.
 * </ul>
 *
 * <p>Each can be changed: {@code bench.requests}, {@code bench.concurrency}, {@code bench.latency-ms},
 * {@code bench.burn-ms}, {@code bench.image-bytes}, and {@code bench.count} (the variants each request asks for,
 * contract v1.1: {@code count} calls and images per request; default 1, no {@code count} sent). Other options: {@code bench.rounds} (1), {@code bench.warmup}
 * (requests sent and awaited before each measured run; default 1000, {@code huge} 32, or the concurrency if larger),
 * {@code bench.worker-jvm-options} (the JVM options of both contestants, given through {@code JAVA_TOOL_OPTIONS};
 * default {@value #DEFAULT_JVM_OPTIONS}, {@code huge} {@value #HUGE_JVM_OPTIONS}), {@code
 * bench.peer-cmd} (a command for the yardstick, e.g. {@code java -jar ../pc-worker.jar}; it gets the same environment
 * and is taken as started when launched), {@code bench.worker-cmd} (another command instead of the packaged worker),
 * {@code bench.timeout-s}, {@code bench.echo-worker}, {@code bench.console} ({@code true}: the packaged worker runs with
 * its console on, {@code IMAGE_WORKER_CONSOLE_ENABLED}, and a client stays subscribed to its server-sent events, as an
 * open page would, from the warm-up to the end of the run; issue 52's figure "with and without a console client").
 *
 * <p>Figures of each run: wall time (first send to last result), requests per second, gateway image calls and images
 * stored per second, efficiency against Little's law where the gateway has a latency ({@code calls x latency /
 * concurrency} over the wall time), CPU seconds the
 * contestant's process used per 1000 requests, its peak heap (before a collection) and largest heap after a
 * collection and the sum of its GC pauses (from its GC log), the most bytes of images and answers the worker held at
 * once (its gauge {@value #HELD_PEAK_METRIC}, read from {@code /q/metrics} after the run; {@code n/a} for the
 * yardstick, which has no such endpoint, and for a worker without the gauge), its peak thread count, the most gateway
 * calls in flight, how long the gateway saw calls last (p50), how long from the gateway's answer to the result's
 * record (p50), and failures. A contestant that runs out of heap ({@code -XX:+ExitOnOutOfMemoryError} ends it; without
 * it, its log's {@code OutOfMemoryError} is enough) is reported as {@code OOM after N of <requests>} at once, instead
 * of being awaited until the timeout.
 *
 * <p>Exit status 0 when every request of every image-worker run completed and the gateway never saw more calls at once
 * than the limit; 1 otherwise. The yardstick's failures are reported, not judged.
 *
 * <p>{@code -Dbench.regime=priority} measures the priority lane instead ({@link PriorityBenchmark}), {@code
 * -Dbench.regime=producers} fair shares among producers ({@link ProducersBenchmark}; {@code parking}: at any
 * backlog, with parking and without), {@code
 * -Dbench.regime=rebalance} what scale-outs, rollouts, scale-ins and kills cost with long calls ({@link
 * RebalanceBenchmark}).
 */
public final class Benchmark {

    /**
     * Requests each contestant handles before a measured run, unless {@code bench.warmup} says otherwise: enough for
     * the JIT to reach its steady state, as in a worker that runs for days (with 100, both contestants were still
     * compiling through the measured run on this 2-core machine).
     */
    static final int WARMUP = 1_000;

    /** JVM options of the contestants unless {@code bench.worker-jvm-options} says otherwise. */
    static final String DEFAULT_JVM_OPTIONS = "-Xms256m -Xmx1g -XX:+UseParallelGC -XX:+ExitOnOutOfMemoryError";

    /**
     * JVM options of the contestants in the {@code huge} regime: the heap the yardstick handles these answers in, and
     * the one issue 17's worker ran out of. {@code -XX:+ExitOnOutOfMemoryError} ends a contestant that runs out, so
     * that it is reported at once rather than awaited until the timeout, half alive.
     */
    static final String HUGE_JVM_OPTIONS = "-Xms256m -Xmx512m -XX:+UseParallelGC -XX:+ExitOnOutOfMemoryError";

    /** The worker's gauge of the most bytes of images and answers it held at once (contract v1.2's memory budget). */
    static final String HELD_PEAK_METRIC = "image_worker_memory_held_peak_bytes";

    /**
     * 400 requests for 2048x2048 images of 9.4 MB each (12.5 MB of {@code b64_json} answer), 16 at a time, no latency.
     * Its warm-up is 32 requests, not 1000: every request here moves about 30 MB (answer, decoded image, upload), so
     * 1000 would take more than a minute per contestant and store 9.4 GB in the S3 server, and the time goes to
     * copying, decoding and hashing megabytes (intrinsics, compiled after a few requests) rather than to code paths the
     * JIT is still compiling; what this regime measures, whether the heap holds, does not depend on a warm JIT.
     */
    static final Regime HUGE = new Regime("huge", 400, 16, 0, 0, 9_400_000, 1, "2048x2048", 32, HUGE_JVM_OPTIONS);

    /**
     * Calls of real length (issue 47): 6000 requests, 2000 calls at a time, each answered after 30 s with a 6 KB PNG;
     * no warm-up, as a new replica meets a backlog (no answer seen yet). Little's law gives 90 s.
     */
    static final Regime LONG_CALLS =
            new Regime("long-calls", 6_000, 2_000, 30_000, 0, 6_000, 1, "1024x1024", 0, DEFAULT_JVM_OPTIONS, 0, 0);

    /** {@link #LONG_CALLS} with every fourth request asking for 3840x2160, answered with an 8 MB PNG (10.7 MB answer). */
    static final Regime LONG_CALLS_4K = new Regime(
            "long-calls-4k", 6_000, 2_000, 30_000, 0, 6_000, 1, "1024x1024", 0, DEFAULT_JVM_OPTIONS, 4, 8_000_000);

    /** The size a request of a regime with large answers asks for, every {@link Regime#largeEvery()}th request. */
    static final String LARGE_SIZE = "3840x2160";

    private static final Map<String, Regime> REGIMES = Map.of(
            "latency", new Regime("latency", 640, 64, 2_000, 0, 0, 1),
            "latency-burn", new Regime("latency-burn", 640, 64, 2_000, 20, 0, 1),
            "concurrency", new Regime("concurrency", 5_000, 500, 2_000, 0, 4_500, 1),
            "cpu", new Regime("cpu", 3_000, 64, 0, 0, 2_000_000, 1),
            "huge", HUGE,
            "long-calls", LONG_CALLS,
            "long-calls-4k", LONG_CALLS_4K,
            "cold-latency", new Regime("cold-latency", 640, 64, 2_000, 0, 0, 1),
            "cold-concurrency", new Regime("cold-concurrency", 5_000, 500, 2_000, 0, 4_500, 1));

    /** The cold regimes' second worker: the same, started without the AOT cache. */
    static final String NO_CACHE = "image-worker-no-cache";

    private static final List<String> ALL = List.of("latency", "latency-burn", "concurrency", "cpu");

    private Benchmark() {}

    public static void main(String[] args) throws IOException {
        LaunchLogging.quiet();
        String regimeOption = System.getProperty("bench.regime", "latency").trim();
        if (regimeOption.equals("priority")) {
            System.exit(PriorityBenchmark.run() ? 0 : 1);
        }
        if (regimeOption.equals("producers")) {
            System.exit(ProducersBenchmark.run() ? 0 : 1);
        }
        if (regimeOption.equals("parking")) {
            System.exit(ProducersBenchmark.runParking() ? 0 : 1);
        }
        if (regimeOption.equals("rebalance")) {
            System.exit(RebalanceBenchmark.run() ? 0 : 1);
        }
        List<String> names = regimeOption.equals("all") ? ALL : Arrays.asList(regimeOption.split("\\s*,\\s*"));
        int rounds = Integer.getInteger("bench.rounds", 1);
        List<Contestant> contestants = new ArrayList<>();
        contestants.add(new Contestant("image-worker", words(System.getProperty("bench.worker-cmd", ""))));
        List<Contestant> coldContestants = coldContestants(contestants.get(0));
        List<String> peer = words(System.getProperty("bench.peer-cmd", ""));
        if (!peer.isEmpty()) {
            contestants.add(new Contestant("peer", peer));
            coldContestants.add(new Contestant("peer", peer));
        }

        List<Row> rows = onEmbeddedInfrastructure("image-worker-bench", (infrastructure, dataDir) -> {
            List<Row> runs = new ArrayList<>();
            for (String name : names) {
                Regime regime = Objects.requireNonNull(REGIMES.get(name), () -> "no regime " + name + ": " + ALL)
                        .overridden();
                for (int round = 1; round <= rounds; round++) {
                    // Worker first in odd rounds, yardstick first in even ones: the shared broker and S3 server keep
                    // warming up through the first runs, and neither contestant should always meet them colder.
                    List<Contestant> order = new ArrayList<>(regime.fresh() ? coldContestants : contestants);
                    if (round % 2 == 0) {
                        Collections.reverse(order);
                    }
                    for (Contestant contestant : order) {
                        runs.add(run(infrastructure, regime, contestant, round, dataDir));
                    }
                }
            }
            return runs;
        });
        printTable(rows);
        List<String> problems = rows.stream()
                .filter(row -> row.contestant().startsWith("image-worker"))
                .flatMap(row -> row.problems().stream())
                .toList();
        System.exit(verdict(problems.isEmpty(), String.join("; ", problems)) ? 0 : 1);
    }

    /**
     * The cold regimes' contestants but the yardstick: the worker with the AOT cache (when there is one) and without.
     */
    private static List<Contestant> coldContestants(Contestant worker) {
        List<Contestant> cold = new ArrayList<>();
        Path cache = Path.of(
                System.getProperty("bench.aot-cache", "").isBlank()
                        ? BuildPaths.buildDir().resolve(AotTraining.CACHE).toString()
                        : System.getProperty("bench.aot-cache").trim());
        if (Files.isRegularFile(cache)) {
            cold.add(new Contestant(worker.name(), worker.command(), List.of("-XX:AOTCache=" + cache)));
        } else {
            say("no AOT cache at %s: the cold regimes run the worker without one only (train it: -Paot)", cache);
        }
        cold.add(new Contestant(NO_CACHE, worker.command(), List.of()));
        return cold;
    }

    /** The runs of a benchmark on one {@code infrastructure}, whose files go under {@code dataDir}. */
    @FunctionalInterface
    interface Runs<R> {
        List<R> on(Infrastructure infrastructure, Path dataDir);
    }

    /**
     * {@code runs} on an embedded Kafka broker and S3 store, on ports of their own, whose data go in a new temporary
     * directory named after {@code name}, deleted afterwards.
     */
    static <R> List<R> onEmbeddedInfrastructure(String name, Runs<R> runs) throws IOException {
        Path dataDir = Files.createTempDirectory(name);
        try (Infrastructure infrastructure = Infrastructure.startEmbedded(dataDir, 0, 0)) {
            return runs.on(infrastructure, dataDir);
        } finally {
            BuildPaths.deleteTree(dataDir);
        }
    }

    private static Row run(
            Infrastructure infrastructure, Regime regime, Contestant contestant, int round, Path dataDir) {
        SimulatorSettings simulator = SimulatorSettings.defaults()
                .withLatency(Latency.fixedMillis(regime.latencyMs()))
                .withCpuPerAnswer(Duration.ofMillis(regime.burnMs()))
                .withImageBytes(regime.imageBytes())
                .withLargeImageBytes(regime.largeImageBytes())
                .withQuota(SimulatorSettings.UNLIMITED_QUOTA);
        Path gcLog = dataDir.resolve(contestant.name() + "-" + regime.name() + "-" + round + "-gc.log");
        Duration timeout = timeout(regime);
        try (LaunchStack stack = LaunchStack.on(infrastructure, simulator)) {
            WorkerProcess.Builder builder = WorkerProcess.builder()
                    .name("bench-" + contestant.name())
                    .env(stack.workerEnvironment(regime.concurrency()))
                    // The AWS SDK's own names too, for a yardstick that reads only those.
                    .env("AWS_ACCESS_KEY_ID", infrastructure.s3AccessKey())
                    .env("AWS_SECRET_ACCESS_KEY", infrastructure.s3SecretKey())
                    .env("AWS_REGION", infrastructure.s3Region())
                    .env(
                            "JAVA_TOOL_OPTIONS",
                            String.join(" ", words(regime.jvmOptions())) + " -Xlog:gc:file=" + gcLog
                                    + contestant.jvmOptions().stream()
                                            .map(option -> " " + option)
                                            .collect(Collectors.joining()))
                    .echo(Boolean.getBoolean("bench.echo-worker"));
            boolean console =
                    Boolean.getBoolean("bench.console") && contestant.command().isEmpty();
            if (console) {
                builder.env("IMAGE_WORKER_CONSOLE_ENABLED", "true");
            }
            if (!contestant.command().isEmpty()) {
                builder.command(contestant.command());
            }
            // A cold contestant is measured from its launch, not from its readiness.
            builder.httpReadiness(contestant.command().isEmpty() && !regime.cold());
            WorkerProcess process = builder.build();
            try (PipelineClient client =
                    new PipelineClient(infrastructure.kafkaBootstrapServers(), stack.topics(), false, result -> {})) {
                if (regime.cold()) {
                    return coldRun(regime, contestant, round, stack, client, process, gcLog, timeout);
                }
                say("%s, round %d, %s: starting (log %s)", regime, round, contestant.name(), process.logFile());
                process.start();
                ConsoleClient consoleClient = console ? ConsoleClient.subscribe(process.port()) : null;
                try {
                    return warmAndMeasure(regime, contestant, round, stack, client, process, gcLog, timeout);
                } finally {
                    if (consoleClient != null) {
                        consoleClient.close();
                    }
                }
            } finally {
                process.stop();
            }
        }
    }

    /** The warm-up, then the measured run, of a contestant started. */
    private static Row warmAndMeasure(
            Regime regime,
            Contestant contestant,
            int round,
            LaunchStack stack,
            PipelineClient client,
            WorkerProcess process,
            Path gcLog,
            Duration timeout) {
        OutOfMemoryWatch oom = new OutOfMemoryWatch(process);
        Batch warm = publish(client, "warmup", regime.warmup(), 1, regime.size(), 0);
        awaitAll(client, warm, oom, Duration.ofMinutes(3));
        if (oom.died()) {
            // Nothing to measure: the run's requests would find no one to handle them.
            Row row = Row.deadBeforeRun(
                    regime,
                    contestant.name(),
                    round,
                    oom.death() + " in the warm-up, after "
                            + firsts(client.results(), warm).size() + " of "
                            + warm.sentAt().size());
            System.out.println(row.describe());
            return row;
        }
        stack.gateway().reset();
        ProcessProbe probe = ProcessProbe.start(process.pid(), gcLog);
        Batch batch = publish(client, "bench", regime.requests(), regime.count(), regime.size(), regime.largeEvery());
        return awaitAndMeasure(new Run(regime, contestant, round, stack, client, process), batch, probe, oom, timeout);
    }

    /**
     * A client subscribed to a worker's console ({@code -Dbench.console=true}): it reads the server-sent events of
     * {@code /console/api/events} on a thread of its own, as an open page would, and says at the end how many it read.
     */
    static final class ConsoleClient implements AutoCloseable {
        private final java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        private final java.util.concurrent.atomic.AtomicLong events = new java.util.concurrent.atomic.AtomicLong();
        private final java.util.concurrent.atomic.AtomicLong entries = new java.util.concurrent.atomic.AtomicLong();
        private volatile java.util.concurrent.CompletableFuture<?> stream;

        static ConsoleClient subscribe(int port) {
            ConsoleClient client = new ConsoleClient();
            java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create("http://127.0.0.1:" + port + "/console/api/events?after=0"))
                    .header("Accept", "text/event-stream")
                    .build();
            client.stream = client.http
                    .sendAsync(request, java.net.http.HttpResponse.BodyHandlers.ofLines())
                    .thenAccept(answer -> {
                        if (answer.statusCode() != 200) {
                            say("console client: the console answered %d; is it on?", answer.statusCode());
                            return;
                        }
                        answer.body().forEach(line -> {
                            if (line.startsWith("data: ")) {
                                client.events.incrementAndGet();
                                // Each entry of the JSON array carries one "seq".
                                client.entries.addAndGet(line.split("\"seq\":", -1).length - 1);
                            }
                        });
                    });
            say("console client: subscribed to http://127.0.0.1:%d/console/api/events", port);
            return client;
        }

        @Override
        public void close() {
            say("console client: %d events of %d entries read", events.get(), entries.get());
            // The worker stops next, which ends the stream.
            stream.cancel(true);
        }
    }

    /**
     * A cold run: the requests published first (the lag that starts a replica), then the contestant launched; the
     * clock, and the CPU count, start at the launch.
     */
    private static Row coldRun(
            Regime regime,
            Contestant contestant,
            int round,
            LaunchStack stack,
            PipelineClient client,
            WorkerProcess process,
            Path gcLog,
            Duration timeout) {
        Batch published =
                publish(client, "cold", regime.requests(), regime.count(), regime.size(), regime.largeEvery());
        say(
                "%s, round %d, %s: %d requests waiting; launching (log %s)",
                regime, round, contestant.name(), regime.requests(), process.logFile());
        Instant launchedAt = Instant.now();
        long launched = System.nanoTime();
        process.start();
        ProcessProbe probe = ProcessProbe.fromLaunch(process.pid(), gcLog);
        OutOfMemoryWatch oom = new OutOfMemoryWatch(process);
        Batch batch = new Batch(published.sentAt(), launchedAt, launched);
        return awaitAndMeasure(new Run(regime, contestant, round, stack, client, process), batch, probe, oom, timeout);
    }

    /** Who runs what where: the parts of one measured run. */
    private record Run(
            Regime regime,
            Contestant contestant,
            int round,
            LaunchStack stack,
            PipelineClient client,
            WorkerProcess process) {}

    /** Waits for every request of {@code batch} (or the contestant's death), then prints and returns the figures. */
    private static Row awaitAndMeasure(
            Run run, Batch batch, ProcessProbe probe, OutOfMemoryWatch oom, Duration timeout) {
        awaitAll(run.client(), batch, oom, timeout);
        ProcessProbe.Reading reading = probe.stop();
        OptionalDouble heldPeak = run.contestant().name().startsWith("image-worker") && !oom.died()
                ? run.process().metric(HELD_PEAK_METRIC)
                : OptionalDouble.empty();
        Row row = measure(
                run.regime(),
                run.contestant().name(),
                run.round(),
                batch,
                run.client().results(),
                run.stack().gateway(),
                reading,
                heldPeak,
                oom.death());
        System.out.println(row.describe());
        return row;
    }

    private static Duration timeout(Regime regime) {
        long seconds = Long.getLong("bench.timeout-s", 0);
        if (seconds > 0) {
            return Duration.ofSeconds(seconds);
        }
        long ideal = regime.latencyMs() * regime.requests() * regime.count() / regime.concurrency() / 1000;
        return Duration.ofSeconds(Math.max(ideal * 3, regime.requests() / 5) + 60);
    }

    /**
     * Publishes {@code count} requests at once, of {@code variants} images each, of {@code size} but every {@code
     * largeEvery}th of {@value #LARGE_SIZE} (0: none), waiting only for the broker's acknowledgements.
     */
    private static Batch publish(
            PipelineClient client, String prefix, int count, int variants, String size, int largeEvery) {
        String runId = UUID.randomUUID().toString().substring(0, 8);
        Map<String, Long> sentAt = new LinkedHashMap<>();
        List<CompletableFuture<?>> acks = new ArrayList<>(count);
        Instant firstAt = Instant.now();
        long first = System.nanoTime();
        for (int i = 1; i <= count; i++) {
            String id = prefix + "-" + runId + "-" + i;
            String asked = largeEvery > 0 && i % largeEvery == 0 ? LARGE_SIZE : size;
            sentAt.put(id, System.nanoTime());
            acks.add(client.sendAsync(
                    id,
                    "{\"requestId\":\"" + id + "\",\"prompt\":\"benchmark image " + id + "\",\"size\":\"" + asked + "\""
                            + (variants > 1 ? ",\"count\":" + variants : "") + "}"));
        }
        client.flush();
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new))
                .orTimeout(120, TimeUnit.SECONDS)
                .join();
        return new Batch(sentAt, firstAt, first);
    }

    private static void awaitAll(PipelineClient client, Batch batch, OutOfMemoryWatch oom, Duration timeout) {
        try {
            await("results")
                    .atMost(timeout)
                    .pollInterval(Duration.ofMillis(50))
                    .failFast("the process exited or ran out of memory", oom::died)
                    .until(() -> firsts(client.results(), batch).size()
                            == batch.sentAt().size());
        } catch (ConditionTimeoutException | TerminalFailureException e) {
            say("not every request ended: %s", e.getMessage());
        }
    }

    private static Map<String, PipelineClient.Result> firsts(List<PipelineClient.Result> results, Batch batch) {
        Map<String, PipelineClient.Result> firsts = new HashMap<>();
        for (PipelineClient.Result result : results) {
            if (batch.sentAt().containsKey(result.requestId())) {
                firsts.putIfAbsent(result.requestId(), result);
            }
        }
        return firsts;
    }

    /** The figures of a run; {@code death} is how the contestant died during it ({@link OutOfMemoryWatch#death()}). */
    private static Row measure(
            Regime regime,
            String contestant,
            int round,
            Batch batch,
            List<PipelineClient.Result> results,
            GatewaySimulator gateway,
            ProcessProbe.Reading reading,
            OptionalDouble heldPeakBytes,
            String death) {
        Map<String, PipelineClient.Result> firsts = firsts(results, batch);
        int requests = batch.sentAt().size();
        long completed = firsts.values().stream()
                .filter(PipelineClient.Result::completed)
                .count();
        Map<String, Long> failures = firsts.values().stream()
                .filter(result -> !result.completed())
                .collect(Collectors.groupingBy(
                        result -> String.valueOf(result.errorCode()), LinkedHashMap::new, Collectors.counting()));
        long last = firsts.values().stream()
                .mapToLong(PipelineClient.Result::receivedNanos)
                .max()
                .orElse(batch.firstSendNanos());
        double wall = Math.max(1e-3, (last - batch.firstSendNanos()) / 1e9);
        double ideal = regime.latencyMs() > 0
                ? (double) regime.requests() * regime.count() * (regime.latencyMs() / 1e3) / regime.concurrency()
                : Double.NaN;
        List<RecordedCall> calls = gateway.imageCalls();
        long images = firsts.values().stream()
                .filter(PipelineClient.Result::completed)
                .mapToLong(result -> result.body().has("images")
                        ? result.body().path("images").size()
                        : 1)
                .sum();
        Map<String, Instant> answeredAt = new HashMap<>();
        long[] callMs = calls.stream()
                .filter(call -> call.finishedAt() != null)
                .mapToLong(call ->
                        Duration.between(call.arrivedAt(), call.finishedAt()).toMillis())
                .sorted()
                .toArray();
        for (RecordedCall call : calls) {
            String prompt = call.textFields().get("prompt");
            if (prompt != null && call.finishedAt() != null) {
                answeredAt.put(prompt.substring(prompt.lastIndexOf(' ') + 1), call.finishedAt());
            }
        }
        long[] publishMs = firsts.values().stream()
                .filter(result -> answeredAt.containsKey(result.requestId()))
                .mapToLong(result -> Duration.between(answeredAt.get(result.requestId()), result.createdAt())
                        .toMillis())
                .sorted()
                .toArray();
        // Where the wall goes beyond the calls: the start (first send to first call), the calls' tail, the end.
        calls.stream().map(RecordedCall::arrivedAt).min(Instant::compareTo).ifPresent(firstCall -> {
            Instant lastAnswer = calls.stream()
                    .map(RecordedCall::finishedAt)
                    .filter(Objects::nonNull)
                    .max(Instant::compareTo)
                    .orElse(firstCall);
            Instant lastResult = firsts.values().stream()
                    .map(PipelineClient.Result::createdAt)
                    .max(Instant::compareTo)
                    .orElse(lastAnswer);
            say(
                    "  first call %d ms after the first send; gateway call p95 %d ms, max %d ms; last result %d ms"
                            + " after the last answer",
                    Duration.between(batch.firstSendAt(), firstCall).toMillis(),
                    percentile(callMs, 95),
                    callMs.length == 0 ? -1 : callMs[callMs.length - 1],
                    Duration.between(lastAnswer, lastResult).toMillis());
        });
        say(
                "  calls at the gateway each second of the first 10 from the first send, then every 5 s: %s",
                timeline(calls, batch.firstSendAt(), wall));
        return new Row(
                regime,
                contestant,
                round,
                requests,
                completed,
                failures,
                requests - firsts.size(),
                wall,
                firsts.size() / wall,
                calls.size(),
                images / wall,
                ideal / wall,
                reading.cpuSeconds() * 1000 / requests,
                reading.othersCpuSeconds() * 1000 / requests,
                reading.heapPeakMb(),
                reading.heapLiveMb(),
                reading.gcPauseSeconds(),
                heldPeakBytes,
                reading.peakThreads(),
                gateway.maxConcurrentImageCalls(),
                inFlightAt(calls, batch.firstSendAt().plusSeconds(5)),
                secondsUntilInFlight(calls, batch.firstSendAt(), (int) Math.ceil(0.95 * regime.concurrency())),
                percentile(callMs, 50),
                percentile(publishMs, 50),
                firsts.values().stream().mapToLong(PipelineClient.Result::receivedNanos).min().stream()
                        .mapToDouble(first -> (first - batch.firstSendNanos()) / 1e9)
                        .findFirst()
                        .orElse(Double.NaN),
                death == null ? null : death + " after " + completed + " of " + requests);
    }

    /**
     * The calls the gateway held each second of the first 10 from {@code from}, then every 5 s for {@code seconds}:
     * how fast a run fills its slots, and where it loses time between waves of calls (a dip).
     */
    static String timeline(List<RecordedCall> calls, Instant from, double seconds) {
        StringBuilder line = new StringBuilder();
        for (int at = 1; at <= seconds + 5; at += at < 10 ? 1 : 5) {
            line.append(line.length() == 0 ? "" : " ").append(inFlightAt(calls, from.plusSeconds(at)));
        }
        return line.toString();
    }

    /** The calls the gateway held at {@code at}: arrived by then, not finished. */
    static int inFlightAt(List<RecordedCall> calls, Instant at) {
        return (int) calls.stream()
                .filter(call -> !call.arrivedAt().isAfter(at)
                        && (call.finishedAt() == null || call.finishedAt().isAfter(at)))
                .count();
    }

    /** Seconds from {@code from} until the gateway first held {@code target} calls at once; NaN when it never did. */
    static double secondsUntilInFlight(List<RecordedCall> calls, Instant from, int target) {
        // +1 at each arrival, -1 at each end; ends first at the same instant.
        List<Map.Entry<Instant, Integer>> steps = new ArrayList<>();
        for (RecordedCall call : calls) {
            steps.add(Map.entry(call.arrivedAt(), 1));
            if (call.finishedAt() != null) {
                steps.add(Map.entry(call.finishedAt(), -1));
            }
        }
        steps.sort(Map.Entry.<Instant, Integer>comparingByKey().thenComparing(Map.Entry.comparingByValue()));
        int held = 0;
        for (Map.Entry<Instant, Integer> step : steps) {
            held += step.getValue();
            if (held >= target) {
                return Duration.between(from, step.getKey()).toMillis() / 1e3;
            }
        }
        return Double.NaN;
    }

    private static void printTable(List<Row> rows) {
        printTable(
                "| regime | contestant | round | completed / requests | failed | first result s | wall s | req/s | calls"
                        + " | images/s | efficiency"
                        + " | CPU s / 1000 req | rest of the stack CPU s / 1000 req | heap peak / after GC MB | GC pauses s"
                        + " | most held MB | threads | calls in flight | in flight at 5 s | s to 95% of C"
                        + " | gateway call p50 ms | answer to result p50 ms |",
                rows.stream().map(Row::tableLine).toList());
    }

    /** A Markdown table between two rules: {@code header}, the line under it, then {@code lines}, one a row. */
    static void printTable(String header, List<String> lines) {
        System.out.println("=".repeat(100));
        System.out.println(header);
        long columns = header.chars().filter(c -> c == '|').count() - 1;
        System.out.println("|---".repeat((int) columns) + "|");
        lines.forEach(System.out::println);
        System.out.println("=".repeat(100));
    }

    /** A row of a benchmark's table: requests sent and ended, and its line. */
    interface SentAndEnded {
        int sent();

        int ended();

        String describe();
    }

    /**
     * Prints {@code rows} in a table under {@code header}, then the verdict: ok when every request sent ended, else
     * {@code failure}; returns it.
     */
    static boolean printTableAndVerdict(String header, List<? extends SentAndEnded> rows, String failure) {
        printTable(header, rows.stream().map(SentAndEnded::describe).toList());
        return verdict(rows.stream().allMatch(row -> row.ended() == row.sent()), failure);
    }

    /** A worker of {@code stack} named {@code name}, with {@code concurrency} call slots and {@code jvmOptions}. */
    static WorkerProcess.Builder worker(LaunchStack stack, String name, int concurrency, List<String> jvmOptions) {
        return WorkerProcess.builder()
                .name(name)
                .env(stack.workerEnvironment(concurrency))
                .env("JAVA_TOOL_OPTIONS", String.join(" ", jvmOptions));
    }

    /** The milliseconds from each request's time in {@code from} to its time in {@code to}, sorted. */
    static long[] sortedMillis(Map<String, Instant> from, Map<String, Instant> to) {
        return to.entrySet().stream()
                .mapToLong(entry -> Duration.between(from.get(entry.getKey()), entry.getValue())
                        .toMillis())
                .sorted()
                .toArray();
    }

    /** The nearest-rank percentile of sorted values; -1 when there are none. */
    static long percentile(long[] sorted, int percent) {
        if (sorted.length == 0) {
            return -1;
        }
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank(sorted.length, percent) - 1))];
    }

    /** The nearest rank (from 1) of the {@code percent}th percentile among {@code count} values. */
    static int rank(int count, int percent) {
        return Math.max(1, (int) Math.ceil(percent / 100.0 * count));
    }

    static List<String> words(String text) {
        return Arrays.stream(text.trim().split("\\s+"))
                .filter(word -> !word.isBlank())
                .toList();
    }

    /**
     * Prints the line that ends a benchmark's output, {@code RESULT: ok} or {@code RESULT: FAILED: } and {@code
     * failure}, and returns {@code ok}.
     */
    static boolean verdict(boolean ok, String failure) {
        System.out.println(ok ? " RESULT: ok" : " RESULT: FAILED: " + failure);
        return ok;
    }

    static void say(String format, Object... args) {
        System.out.println("[bench] " + String.format(Locale.ROOT, format, args));
        System.out.flush();
    }

    /**
     * One regime: the load and what the gateway answers with.
     *
     * @param latencyMs how long the gateway takes per call
     * @param burnMs CPU time the gateway spends per answer
     * @param imageBytes size of each answered PNG (0: the smallest)
     * @param count the variants each request asks for (1: no {@code count} sent)
     * @param size the {@code size} each request asks for; the simulator answers images of that size
     * @param warmup the requests each contestant handles before the measured ones (raised to the concurrency; 0: none)
     * @param jvmOptions the JVM options of both contestants, as one line
     * @param largeEvery every how many requests one asks for {@value Benchmark#LARGE_SIZE} (0: none)
     * @param largeImageBytes the size of the PNGs answered to those
     */
    record Regime(
            String name,
            int requests,
            int concurrency,
            long latencyMs,
            long burnMs,
            int imageBytes,
            int count,
            String size,
            int warmup,
            String jvmOptions,
            int largeEvery,
            int largeImageBytes) {

        /** A regime whose requests all ask for {@code size}. */
        Regime(
                String name,
                int requests,
                int concurrency,
                long latencyMs,
                long burnMs,
                int imageBytes,
                int count,
                String size,
                int warmup,
                String jvmOptions) {
            this(name, requests, concurrency, latencyMs, burnMs, imageBytes, count, size, warmup, jvmOptions, 0, 0);
        }

        /** A regime of 1024x1024 images, {@value Benchmark#WARMUP} warm-up requests and {@value Benchmark#DEFAULT_JVM_OPTIONS}. */
        Regime(String name, int requests, int concurrency, long latencyMs, long burnMs, int imageBytes, int count) {
            this(
                    name,
                    requests,
                    concurrency,
                    latencyMs,
                    burnMs,
                    imageBytes,
                    count,
                    "1024x1024",
                    WARMUP,
                    DEFAULT_JVM_OPTIONS);
        }

        /**
         * Whether this regime meets a replica just started, as the image starts it: the worker once with its AOT cache
         * (when one was trained) and once without. The cold regimes, measured from the launch, and the regimes of
         * calls of real length, measured from the backlog's first record once the worker is ready: a replica KEDA
         * has just started for the lag.
         */
        boolean fresh() {
            return cold() || name.startsWith("long-calls");
        }

        /** Whether this is a cold regime: a fresh contestant measured from its launch, no warm-up. */
        boolean cold() {
            return name.startsWith("cold-");
        }

        /**
         * This regime with the {@code bench.*} overrides applied; an empty one (the Maven profile passes every option,
         * empty when not given) keeps the regime's value.
         */
        Regime overridden() {
            String options = System.getProperty("bench.worker-jvm-options", "");
            int concurrency = Integer.getInteger("bench.concurrency", this.concurrency);
            return new Regime(
                    name,
                    Integer.getInteger("bench.requests", requests),
                    concurrency,
                    Long.getLong("bench.latency-ms", latencyMs),
                    Long.getLong("bench.burn-ms", burnMs),
                    Integer.getInteger("bench.image-bytes", imageBytes),
                    Integer.getInteger("bench.count", count),
                    size,
                    name.startsWith("cold-")
                            ? 0
                            : Integer.getInteger("bench.warmup", warmup == 0 ? 0 : Math.max(warmup, concurrency)),
                    options.isBlank() ? jvmOptions : options.trim(),
                    largeEvery,
                    Integer.getInteger("bench.large-image-bytes", largeImageBytes));
        }

        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "%s (%d requests%s of %s, concurrency %d, latency %d ms, %d ms CPU per answer, %s, %d warm-up, JVM %s)",
                    name,
                    requests,
                    count > 1 ? " of count " + count : "",
                    largeEvery > 0
                            ? size + " (every " + largeEvery + "th " + LARGE_SIZE + ", " + largeImageBytes
                                    + "-byte PNGs)"
                            : size,
                    concurrency,
                    latencyMs,
                    burnMs,
                    imageBytes == 0 ? "small PNGs" : imageBytes + "-byte PNGs",
                    warmup,
                    jvmOptions);
        }
    }

    /**
     * Who is measured: a name, a command ({@code []}: the packaged worker) and JVM options of its own (the AOT cache).
     */
    record Contestant(String name, List<String> command, List<String> jvmOptions) {
        Contestant(String name, List<String> command) {
            this(name, command, List.of());
        }
    }

    /** One published batch: each request's id and send time. */
    record Batch(Map<String, Long> sentAt, Instant firstSendAt, long firstSendNanos) {}

    /**
     * The figures of one run.
     *
     * @param gcPauseSeconds the sum of the contestant's GC pauses during the run
     * @param heldPeakBytes the worker's {@value Benchmark#HELD_PEAK_METRIC} after the run; empty when not exported
     * @param death how the contestant died during the run ({@code OOM after N of M}); {@code null} when it did not
     */
    record Row(
            Regime regime,
            String contestant,
            int round,
            int requests,
            long completed,
            Map<String, Long> failures,
            int missing,
            double wallSeconds,
            double throughput,
            int calls,
            double imagesPerSecond,
            double efficiency,
            double cpuSecondsPer1000,
            double othersCpuSecondsPer1000,
            long heapPeakMb,
            long heapLiveMb,
            double gcPauseSeconds,
            OptionalDouble heldPeakBytes,
            int peakThreads,
            int peakCalls,
            int callsAt5s,
            double secondsToFullConcurrency,
            long gatewayCallP50Ms,
            long answerToResultP50Ms,
            double firstResultSeconds,
            String death) {

        /** A contestant that died before the measured run: none of its requests was sent. */
        static Row deadBeforeRun(Regime regime, String contestant, int round, String death) {
            return new Row(
                    regime,
                    contestant,
                    round,
                    regime.requests(),
                    0,
                    Map.of(),
                    0,
                    Double.NaN,
                    0,
                    0,
                    0,
                    Double.NaN,
                    Double.NaN,
                    Double.NaN,
                    0,
                    0,
                    Double.NaN,
                    OptionalDouble.empty(),
                    0,
                    0,
                    0,
                    Double.NaN,
                    -1,
                    -1,
                    Double.NaN,
                    death);
        }

        /** This row as a line of the table of results. */
        String tableLine() {
            return String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %s | %s | %.2f | %.1f | %.1f | %d | %.1f | %s | %.1f | %.1f | %s | %.2f | %s | %d"
                            + " | %d | %d | %s | %d | %d |",
                    regime().name(),
                    contestant(),
                    round(),
                    completion(),
                    failures().isEmpty() && missing() == 0
                            ? "0"
                            : failures() + (missing() > 0 ? " missing " + missing() : ""),
                    firstResultSeconds(),
                    wallSeconds(),
                    throughput(),
                    calls(),
                    imagesPerSecond(),
                    Double.isNaN(efficiency()) ? "-" : String.format(Locale.ROOT, "%.2f", efficiency()),
                    cpuSecondsPer1000(),
                    othersCpuSecondsPer1000(),
                    heap(" / ", ""),
                    gcPauseSeconds(),
                    heldPeakMb(),
                    peakThreads(),
                    peakCalls(),
                    callsAt5s(),
                    fullConcurrency(),
                    gatewayCallP50Ms(),
                    answerToResultP50Ms());
        }

        /**
         * The heap before and after the largest collection of the run, or {@code no collection} when the GC log shows
         * none during the measured run (a run short enough, or allocating little enough, for the young generation to
         * hold it): no figure then, rather than 0 / 0.
         */
        String heap(String between, String after) {
            return heapPeakMb() == 0 && heapLiveMb() == 0
                    ? "no collection"
                    : heapPeakMb() + between + heapLiveMb() + after;
        }

        /** Seconds from the first send until the gateway first held 95% of the concurrency, or {@code never}. */
        String fullConcurrency() {
            return Double.isNaN(secondsToFullConcurrency)
                    ? "never"
                    : String.format(Locale.ROOT, "%.1f", secondsToFullConcurrency);
        }

        /** {@code completed / requests}, or how the contestant died. */
        String completion() {
            return death != null ? death : completed + " / " + requests;
        }

        /** The most bytes the worker held at once, in MB, or {@code n/a}. */
        String heldPeakMb() {
            return heldPeakBytes.isPresent()
                    ? String.format(Locale.ROOT, "%.1f", heldPeakBytes.getAsDouble() / (1024 * 1024))
                    : "n/a";
        }

        List<String> problems() {
            List<String> problems = new ArrayList<>();
            if (death != null) {
                problems.add(regime.name() + ": " + death);
            }
            if (missing > 0) {
                problems.add(regime.name() + ": " + missing + " request(s) without a terminal event");
            }
            if (!failures.isEmpty()) {
                problems.add(regime.name() + ": failed " + failures);
            }
            if (peakCalls > regime.concurrency()) {
                problems.add(regime.name() + ": " + peakCalls + " calls at once, above " + regime.concurrency());
            }
            return problems;
        }

        String describe() {
            return String.format(
                    Locale.ROOT,
                    "[bench] %s %s round %d: %s completed, failed %s, missing %d, first result after %.2f s, %.2f s,"
                            + " %.1f req/s, %d calls,"
                            + " %.1f images/s, efficiency"
                            + " %s, %.1f CPU s per 1000 (rest of the stack %.1f), heap %s,"
                            + " GC pauses %.2f s, most held %s, %d threads, %d calls in"
                            + " flight (%d 5 s after the first send, 95%% of the concurrency after %s s),"
                            + " gateway call p50 %d ms, answer to result p50 %d ms",
                    regime.name(),
                    contestant,
                    round,
                    completion(),
                    failures,
                    missing,
                    firstResultSeconds,
                    wallSeconds,
                    throughput,
                    calls,
                    imagesPerSecond,
                    Double.isNaN(efficiency) ? "-" : String.format(Locale.ROOT, "%.2f", efficiency),
                    cpuSecondsPer1000,
                    othersCpuSecondsPer1000,
                    heap(" MB peak / ", " MB after GC"),
                    gcPauseSeconds,
                    heldPeakBytes.isPresent() ? heldPeakMb() + " MB" : "n/a",
                    peakThreads,
                    peakCalls,
                    callsAt5s,
                    fullConcurrency(),
                    gatewayCallP50Ms,
                    answerToResultP50Ms);
        }
    }

    /**
     * Whether a contestant died or ran out of heap: its log says {@code java.lang.OutOfMemoryError} (a JVM without
     * {@code -XX:+ExitOnOutOfMemoryError} may limp on, some threads dead, until the timeout), or its process ended.
     * Reads only what the log gained since the last look, so that it can be asked every few milliseconds. (Not the bare
     * {@code OutOfMemoryError}: the JVM's {@code Picked up JAVA_TOOL_OPTIONS: ... -XX:+ExitOnOutOfMemoryError} says
     * it.)
     */
    static final class OutOfMemoryWatch {
        private static final String NEEDLE = "java.lang.OutOfMemoryError";

        private final WorkerProcess process;
        private long offset;
        private String carry = "";
        private boolean outOfMemory;

        OutOfMemoryWatch(WorkerProcess process) {
            this.process = process;
        }

        /** Whether the contestant ran out of memory or ended. */
        boolean died() {
            return death() != null;
        }

        /** {@code OOM}, {@code died} (ended without saying it ran out of memory) or {@code null} (alive and well). */
        synchronized String death() {
            boolean alive = process.isAlive();
            readLog();
            return outOfMemory ? "OOM" : alive ? null : "died";
        }

        private void readLog() {
            if (outOfMemory) {
                return;
            }
            try (FileChannel log = FileChannel.open(process.logFile())) {
                long size = log.size();
                while (size > offset && !outOfMemory) {
                    ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(size - offset, 1 << 20));
                    log.read(buffer, offset);
                    if (buffer.position() == 0) {
                        return;
                    }
                    offset += buffer.position();
                    String text = carry + new String(buffer.array(), 0, buffer.position(), StandardCharsets.ISO_8859_1);
                    outOfMemory = text.contains(NEEDLE);
                    carry = text.substring(Math.max(0, text.length() - NEEDLE.length()));
                }
            } catch (IOException e) {
                // No log yet: nothing said.
            }
        }
    }

    /**
     * What the kernel and the JVM's GC log say about a process during a measured run: CPU time used (from
     * {@link ProcessHandle.Info#totalCpuDuration()}, sampled too, for a process that dies before the end), peak thread
     * count (sampled from {@code /proc/<pid>/status}), heap sizes before and after each collection logged meanwhile,
     * and the sum of the pauses logged meanwhile.
     */
    static final class ProcessProbe {
        private static final Pattern GC_SIZES = Pattern.compile("(\\d+)([KMG])->(\\d+)([KMG])\\(\\d+[KMG]\\)");

        /** The duration at the end of a pause's line of {@code -Xlog:gc}: {@code GC(3) Pause Young (...) 5.123ms}. */
        private static final Pattern GC_PAUSE = Pattern.compile("\\bPause\\b.*?(\\d+(?:\\.\\d+)?)ms\\s*$");

        private final long pid;
        private final Path gcLog;
        private final Duration cpuAtStart;
        private final Duration othersCpuAtStart;
        private final long gcLinesAtStart;
        private final Map<String, Long> threadTicksAtStart;
        private final Thread sampler;
        private volatile int peakThreads;
        private volatile Duration lastCpu;
        private volatile boolean running = true;

        private ProcessProbe(long pid, Path gcLog, boolean fromLaunch) {
            this.pid = pid;
            this.gcLog = gcLog;
            this.cpuAtStart = fromLaunch ? Duration.ZERO : cpu(pid);
            this.lastCpu = cpuAtStart;
            this.othersCpuAtStart = othersCpu(pid);
            this.gcLinesAtStart = fromLaunch ? 0 : gcLines().size();
            this.threadTicksAtStart = fromLaunch ? Map.of() : threadTicks(pid);
            this.sampler = new Thread(this::sample, "bench-thread-sampler");
            sampler.setDaemon(true);
            sampler.start();
        }

        static ProcessProbe start(long pid, Path gcLog) {
            return new ProcessProbe(pid, gcLog, false);
        }

        /** A probe of a process just launched: its CPU and its collections from its first instruction. */
        static ProcessProbe fromLaunch(long pid, Path gcLog) {
            return new ProcessProbe(pid, gcLog, true);
        }

        Reading stop() {
            running = false;
            try {
                sampler.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Map<String, Long> ticks = threadTicks(pid);
            threadTicksAtStart.forEach((group, atStart) -> ticks.merge(group, -atStart, Long::sum));
            String byThreads = ticks.entrySet().stream()
                    .filter(entry -> entry.getValue() > 0)
                    .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                    .limit(8)
                    .map(entry -> entry.getKey() + " " + entry.getValue() * 10 / 1000.0 + " s")
                    .collect(java.util.stream.Collectors.joining(", "));
            System.out.println("[bench]   CPU by thread group: " + byThreads);
            Duration cpuNow = cpu(pid);
            double cpuSeconds =
                    (cpuNow.isZero() ? lastCpu : cpuNow).minus(cpuAtStart).toMillis() / 1e3;
            double othersSeconds = othersCpu(pid).minus(othersCpuAtStart).toMillis() / 1e3;
            long peak = 0;
            long live = 0;
            double pauseMs = 0;
            List<String> lines = gcLines();
            for (String line : lines.subList((int) Math.min(gcLinesAtStart, lines.size()), lines.size())) {
                Matcher sizes = GC_SIZES.matcher(line);
                if (sizes.find()) {
                    peak = Math.max(peak, megabytes(sizes.group(1), sizes.group(2)));
                    live = Math.max(live, megabytes(sizes.group(3), sizes.group(4)));
                }
                Matcher pause = GC_PAUSE.matcher(line);
                if (pause.find()) {
                    pauseMs += Double.parseDouble(pause.group(1));
                }
            }
            return new Reading(cpuSeconds, othersSeconds, peak, live, pauseMs / 1e3, peakThreads);
        }

        private void sample() {
            Path status = Path.of("/proc", Long.toString(pid), "status");
            while (running) {
                try {
                    Duration cpu = cpu(pid);
                    if (!cpu.isZero()) {
                        lastCpu = cpu;
                    }
                    for (String line : Files.readAllLines(status)) {
                        if (line.startsWith("Threads:")) {
                            peakThreads = Math.max(
                                    peakThreads,
                                    Integer.parseInt(line.substring(8).trim()));
                        }
                    }
                    Thread.sleep(100);
                } catch (IOException | RuntimeException e) {
                    return;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        /**
         * CPU ticks (user and system, in the kernel's 10 ms units) per group of threads of {@code pid}: threads named
         * alike but for their digits form one group.
         */
        private static Map<String, Long> threadTicks(long pid) {
            Map<String, Long> groups = new java.util.TreeMap<>();
            try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
                for (Path task : tasks.toList()) {
                    try {
                        String stat = Files.readString(task.resolve("stat"));
                        String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
                                .replaceAll("[0-9]+", "#");
                        String[] fields =
                                stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        groups.merge(name, Long.parseLong(fields[11]) + Long.parseLong(fields[12]), Long::sum);
                    } catch (IOException | RuntimeException gone) {
                        // The thread ended meanwhile.
                    }
                }
            } catch (IOException | RuntimeException gone) {
                // The process ended.
            }
            return groups;
        }

        private List<String> gcLines() {
            try {
                return Files.exists(gcLog) ? Files.readAllLines(gcLog) : List.of();
            } catch (IOException e) {
                return List.of();
            }
        }

        /**
         * CPU time of everything else the run needs on this machine: this JVM (the simulator, the producer and the
         * result reader) and its other children (the broker, the store).
         */
        private static Duration othersCpu(long contestant) {
            Duration total = ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO);
            for (ProcessHandle child : ProcessHandle.current().descendants().toList()) {
                if (child.pid() != contestant) {
                    total = total.plus(child.info().totalCpuDuration().orElse(Duration.ZERO));
                }
            }
            return total;
        }

        private static Duration cpu(long pid) {
            return ProcessHandle.of(pid)
                    .flatMap(handle -> handle.info().totalCpuDuration())
                    .orElse(Duration.ZERO);
        }

        private static long megabytes(String value, String unit) {
            long number = Long.parseLong(value);
            return switch (unit) {
                case "K" -> number / 1024;
                case "G" -> number * 1024;
                default -> number;
            };
        }

        /** The figures of one run. */
        record Reading(
                double cpuSeconds,
                double othersCpuSeconds,
                long heapPeakMb,
                long heapLiveMb,
                double gcPauseSeconds,
                int peakThreads) {}
    }
}
