package io.imageworker.testing.launch;

import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.infra.Infrastructure;
import java.io.IOException;
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
 *   <li>{@code cpu}: 3000 requests, concurrency 64, no latency, 2 MB PNGs as {@code b64_json}.
 * </ul>
 *
 * <p>Each can be changed: {@code bench.requests}, {@code bench.concurrency}, {@code bench.latency-ms},
 * {@code bench.burn-ms}, {@code bench.image-bytes}, and {@code bench.count} (the variants each request asks for,
 * contract v1.1: {@code count} calls and images per request; default 1, no {@code count} sent). Other options: {@code bench.rounds} (1), {@code bench.warmup}
 * (requests sent and awaited before each measured run; default 1000, or the concurrency if larger), {@code
 * bench.worker-jvm-options} (the JVM options of both contestants, given through {@code JAVA_TOOL_OPTIONS}), {@code
 * bench.peer-cmd} (a command for the yardstick, e.g. {@code java -jar ../pc-worker.jar}; it gets the same environment
 * and is taken as started when launched), {@code bench.worker-cmd} (another command instead of the packaged worker),
 * {@code bench.timeout-s}, {@code bench.echo-worker}.
 *
 * <p>Figures of each run: wall time (first send to last result), requests per second, gateway image calls and images
 * stored per second, efficiency against Little's law where the gateway has a latency ({@code calls x latency /
 * concurrency} over the wall time), CPU seconds the
 * contestant's process used per 1000 requests, its peak heap (before a collection) and largest heap after a
 * collection (from its GC log), its peak thread count, the most gateway calls in flight, how long the gateway saw
 * calls last (p50), how long from the gateway's answer to the result's record (p50), and failures.
 *
 * <p>Exit status 0 when every request of every image-worker run completed and the gateway never saw more calls at once
 * than the limit; 1 otherwise. The yardstick's failures are reported, not judged.
 *
 * <p>{@code -Dbench.regime=priority} measures the priority lane instead ({@link PriorityBenchmark}).
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

    private static final Map<String, Regime> REGIMES = Map.of(
            "latency", new Regime("latency", 640, 64, 2_000, 0, 0, 1),
            "latency-burn", new Regime("latency-burn", 640, 64, 2_000, 20, 0, 1),
            "concurrency", new Regime("concurrency", 5_000, 500, 2_000, 0, 4_500, 1),
            "cpu", new Regime("cpu", 3_000, 64, 0, 0, 2_000_000, 1));
    private static final List<String> ALL = List.of("latency", "latency-burn", "concurrency", "cpu");

    private Benchmark() {}

    public static void main(String[] args) throws IOException {
        LaunchLogging.quiet();
        String regimeOption = System.getProperty("bench.regime", "latency").trim();
        if (regimeOption.equals("priority")) {
            System.exit(PriorityBenchmark.run() ? 0 : 1);
        }
        List<String> names = regimeOption.equals("all") ? ALL : Arrays.asList(regimeOption.split("\\s*,\\s*"));
        int rounds = Integer.getInteger("bench.rounds", 1);
        List<String> jvmOptions = words(System.getProperty("bench.worker-jvm-options", DEFAULT_JVM_OPTIONS));
        List<Contestant> contestants = new ArrayList<>();
        contestants.add(new Contestant("image-worker", words(System.getProperty("bench.worker-cmd", ""))));
        List<String> peer = words(System.getProperty("bench.peer-cmd", ""));
        if (!peer.isEmpty()) {
            contestants.add(new Contestant("peer", peer));
        }

        Path dataDir = Files.createTempDirectory("image-worker-bench");
        List<Row> rows = new ArrayList<>();
        try (Infrastructure infrastructure = Infrastructure.startEmbedded(dataDir, 0, 0)) {
            for (String name : names) {
                Regime regime = Objects.requireNonNull(REGIMES.get(name), () -> "no regime " + name + ": " + ALL)
                        .overridden();
                for (int round = 1; round <= rounds; round++) {
                    // Worker first in odd rounds, yardstick first in even ones: the shared broker and S3 server keep
                    // warming up through the first runs, and neither contestant should always meet them colder.
                    List<Contestant> order = new ArrayList<>(contestants);
                    if (round % 2 == 0) {
                        Collections.reverse(order);
                    }
                    for (Contestant contestant : order) {
                        rows.add(run(infrastructure, regime, contestant, round, jvmOptions, dataDir));
                    }
                }
            }
        } finally {
            BuildPaths.deleteTree(dataDir);
        }
        printTable(rows);
        List<String> problems = rows.stream()
                .filter(row -> row.contestant().equals("image-worker"))
                .flatMap(row -> row.problems().stream())
                .toList();
        System.out.println(problems.isEmpty() ? " RESULT: ok" : " RESULT: FAILED: " + String.join("; ", problems));
        System.exit(problems.isEmpty() ? 0 : 1);
    }

    private static Row run(
            Infrastructure infrastructure,
            Regime regime,
            Contestant contestant,
            int round,
            List<String> jvmOptions,
            Path dataDir) {
        SimulatorSettings simulator = SimulatorSettings.defaults()
                .withLatency(Latency.fixedMillis(regime.latencyMs()))
                .withCpuPerAnswer(Duration.ofMillis(regime.burnMs()))
                .withImageBytes(regime.imageBytes())
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
                    .env("JAVA_TOOL_OPTIONS", String.join(" ", jvmOptions) + " -Xlog:gc:file=" + gcLog)
                    .echo(Boolean.getBoolean("bench.echo-worker"));
            if (!contestant.command().isEmpty()) {
                builder.command(contestant.command()).httpReadiness(false);
            }
            WorkerProcess process = builder.build();
            try (PipelineClient client =
                    new PipelineClient(infrastructure.kafkaBootstrapServers(), stack.topics(), false, result -> {})) {
                say("%s, round %d, %s: starting (log %s)", regime, round, contestant.name(), process.logFile());
                process.start();
                int warmup = Integer.getInteger("bench.warmup", Math.max(WARMUP, regime.concurrency()));
                Batch warm = publish(client, "warmup", warmup, 1);
                awaitAll(client, warm, process, Duration.ofMinutes(3));
                stack.gateway().reset();
                ProcessProbe probe = ProcessProbe.start(process.pid(), gcLog);
                Batch batch = publish(client, "bench", regime.requests(), regime.count());
                awaitAll(client, batch, process, timeout);
                ProcessProbe.Reading reading = probe.stop();
                Row row = measure(regime, contestant.name(), round, batch, client.results(), stack.gateway(), reading);
                System.out.println(row.describe());
                return row;
            } finally {
                process.stop();
            }
        }
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
     * Publishes {@code count} requests at once, of {@code variants} images each, waiting only for the broker's
     * acknowledgements.
     */
    private static Batch publish(PipelineClient client, String prefix, int count, int variants) {
        String runId = UUID.randomUUID().toString().substring(0, 8);
        Map<String, Long> sentAt = new LinkedHashMap<>();
        List<CompletableFuture<?>> acks = new ArrayList<>(count);
        Instant firstAt = Instant.now();
        long first = System.nanoTime();
        for (int i = 1; i <= count; i++) {
            String id = prefix + "-" + runId + "-" + i;
            sentAt.put(id, System.nanoTime());
            acks.add(client.sendAsync(
                    id,
                    "{\"requestId\":\"" + id + "\",\"prompt\":\"benchmark image " + id + "\",\"size\":\"1024x1024\""
                            + (variants > 1 ? ",\"count\":" + variants : "") + "}"));
        }
        client.flush();
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new))
                .orTimeout(120, TimeUnit.SECONDS)
                .join();
        return new Batch(sentAt, firstAt, first);
    }

    private static void awaitAll(PipelineClient client, Batch batch, WorkerProcess process, Duration timeout) {
        try {
            await("results")
                    .atMost(timeout)
                    .pollInterval(Duration.ofMillis(50))
                    .failFast("the process exited", () -> !process.isAlive())
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

    private static Row measure(
            Regime regime,
            String contestant,
            int round,
            Batch batch,
            List<PipelineClient.Result> results,
            GatewaySimulator gateway,
            ProcessProbe.Reading reading) {
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
        double wall = (last - batch.firstSendNanos()) / 1e9;
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
                reading.peakThreads(),
                gateway.maxConcurrentImageCalls(),
                percentile(callMs, 50),
                percentile(publishMs, 50));
    }

    private static void printTable(List<Row> rows) {
        System.out.println("=".repeat(100));
        System.out.println(
                "| regime | contestant | round | completed / requests | failed | wall s | req/s | calls | images/s | efficiency"
                        + " | CPU s / 1000 req | rest of the stack CPU s / 1000 req | heap peak / after GC MB | threads | calls in flight | gateway call p50 ms"
                        + " | answer to result p50 ms |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (Row row : rows) {
            System.out.println(String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %d / %d | %s | %.1f | %.1f | %d | %.1f | %s | %.1f | %.1f | %d / %d | %d | %d | %d | %d |",
                    row.regime().name(),
                    row.contestant(),
                    row.round(),
                    row.completed(),
                    row.requests(),
                    row.failures().isEmpty() && row.missing() == 0
                            ? "0"
                            : row.failures() + (row.missing() > 0 ? " missing " + row.missing() : ""),
                    row.wallSeconds(),
                    row.throughput(),
                    row.calls(),
                    row.imagesPerSecond(),
                    Double.isNaN(row.efficiency()) ? "-" : String.format(Locale.ROOT, "%.2f", row.efficiency()),
                    row.cpuSecondsPer1000(),
                    row.othersCpuSecondsPer1000(),
                    row.heapPeakMb(),
                    row.heapLiveMb(),
                    row.peakThreads(),
                    row.peakCalls(),
                    row.gatewayCallP50Ms(),
                    row.answerToResultP50Ms()));
        }
        System.out.println("=".repeat(100));
    }

    /** The nearest-rank percentile of sorted values; -1 when there are none. */
    static long percentile(long[] sorted, int percent) {
        if (sorted.length == 0) {
            return -1;
        }
        int rank = (int) Math.ceil(percent / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    static List<String> words(String text) {
        return Arrays.stream(text.trim().split("\\s+"))
                .filter(word -> !word.isBlank())
                .toList();
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
     */
    record Regime(String name, int requests, int concurrency, long latencyMs, long burnMs, int imageBytes, int count) {

        /** This regime with the {@code bench.*} overrides applied. */
        Regime overridden() {
            return new Regime(
                    name,
                    Integer.getInteger("bench.requests", requests),
                    Integer.getInteger("bench.concurrency", concurrency),
                    Long.getLong("bench.latency-ms", latencyMs),
                    Long.getLong("bench.burn-ms", burnMs),
                    Integer.getInteger("bench.image-bytes", imageBytes),
                    Integer.getInteger("bench.count", count));
        }

        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "%s (%d requests%s, concurrency %d, latency %d ms, %d ms CPU per answer, %s)",
                    name,
                    requests,
                    count > 1 ? " of count " + count : "",
                    concurrency,
                    latencyMs,
                    burnMs,
                    imageBytes == 0 ? "small PNGs" : imageBytes + "-byte PNGs");
        }
    }

    /** Who is measured: a name and a command ({@code []}: the packaged worker). */
    record Contestant(String name, List<String> command) {}

    /** One published batch: each request's id and send time. */
    record Batch(Map<String, Long> sentAt, Instant firstSendAt, long firstSendNanos) {}

    /** The figures of one run. */
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
            int peakThreads,
            int peakCalls,
            long gatewayCallP50Ms,
            long answerToResultP50Ms) {

        List<String> problems() {
            List<String> problems = new ArrayList<>();
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
                    "[bench] %s %s round %d: %d/%d completed, failed %s, missing %d, %.2f s, %.1f req/s, %d calls,"
                            + " %.1f images/s, efficiency"
                            + " %s, %.1f CPU s per 1000 (rest of the stack %.1f), heap %d MB peak / %d MB after GC, %d threads, %d calls in"
                            + " flight, gateway call p50 %d ms, answer to result p50 %d ms",
                    regime.name(),
                    contestant,
                    round,
                    completed,
                    requests,
                    failures,
                    missing,
                    wallSeconds,
                    throughput,
                    calls,
                    imagesPerSecond,
                    Double.isNaN(efficiency) ? "-" : String.format(Locale.ROOT, "%.2f", efficiency),
                    cpuSecondsPer1000,
                    othersCpuSecondsPer1000,
                    heapPeakMb,
                    heapLiveMb,
                    peakThreads,
                    peakCalls,
                    gatewayCallP50Ms,
                    answerToResultP50Ms);
        }
    }

    /**
     * What the kernel and the JVM's GC log say about a process during a measured run: CPU time used (from
     * {@link ProcessHandle.Info#totalCpuDuration()}), peak thread count (sampled from {@code /proc/<pid>/status}), and
     * heap sizes before and after each collection logged meanwhile.
     */
    static final class ProcessProbe {
        private static final Pattern GC_SIZES = Pattern.compile("(\\d+)([KMG])->(\\d+)([KMG])\\(\\d+[KMG]\\)");

        private final long pid;
        private final Path gcLog;
        private final Duration cpuAtStart;
        private final Duration othersCpuAtStart;
        private final long gcLinesAtStart;
        private final Map<String, Long> threadTicksAtStart;
        private final Thread sampler;
        private volatile int peakThreads;
        private volatile boolean running = true;

        private ProcessProbe(long pid, Path gcLog) {
            this.pid = pid;
            this.gcLog = gcLog;
            this.cpuAtStart = cpu(pid);
            this.othersCpuAtStart = othersCpu(pid);
            this.gcLinesAtStart = gcLines().size();
            this.threadTicksAtStart = threadTicks(pid);
            this.sampler = new Thread(this::sample, "bench-thread-sampler");
            sampler.setDaemon(true);
            sampler.start();
        }

        static ProcessProbe start(long pid, Path gcLog) {
            return new ProcessProbe(pid, gcLog);
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
            double cpuSeconds = cpu(pid).minus(cpuAtStart).toMillis() / 1e3;
            double othersSeconds = othersCpu(pid).minus(othersCpuAtStart).toMillis() / 1e3;
            long peak = 0;
            long live = 0;
            List<String> lines = gcLines();
            for (String line : lines.subList((int) Math.min(gcLinesAtStart, lines.size()), lines.size())) {
                Matcher sizes = GC_SIZES.matcher(line);
                if (sizes.find()) {
                    peak = Math.max(peak, megabytes(sizes.group(1), sizes.group(2)));
                    live = Math.max(live, megabytes(sizes.group(3), sizes.group(4)));
                }
            }
            return new Reading(cpuSeconds, othersSeconds, peak, live, peakThreads);
        }

        private void sample() {
            Path status = Path.of("/proc", Long.toString(pid), "status");
            while (running) {
                try {
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
        record Reading(double cpuSeconds, double othersCpuSeconds, long heapPeakMb, long heapLiveMb, int peakThreads) {}
    }
}
