package io.imageworker.testing.launch;

import io.imageworker.config.WorkerConfig;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.Infrastructure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * Fair shares among producers measured ({@code ./mvnw -Pbench -Dbench.regime=producers}): the packaged worker on an
 * embedded broker and store, the gateway simulator with a fixed latency. Producer A publishes a backlog ({@code
 * bench.requests}, 3000) to the request topic at once, then producer B a few requests ({@code bench.producers-b},
 * 100), all in the normal lane. Three runs:
 *
 * <ul>
 *   <li>{@code fair shares, read-ahead past the backlog}: {@code IMAGE_WORKER_READ_AHEAD} of A's and B's requests
 *       together ({@code bench.read-ahead} to choose another);
 *   <li>{@code fair shares, default read-ahead}: the worker's default ({@link WorkerConfig#DEFAULT_READ_AHEAD});
 *   <li>{@code off (read-ahead 0)}: {@code IMAGE_WORKER_READ_AHEAD=0}, the intake of before contract v1.2: the worker
 *       takes records in the order of the partitions, at most {@code max-in-progress} at once, so B's requests wait
 *       behind A's backlog in Kafka (the turns among producers still apply among those in progress, which hardly
 *       matters here: B's records reach the worker only once A's backlog is nearly done).
 * </ul>
 *
 * <p>For each producer: queueing from a request's publication to the gateway's receipt of its first call (the
 * simulator's record, on this JVM's clock: the time in Kafka, waiting for a turn and for a slot), and from publication
 * to its terminal event's creation by the worker. Settings: {@code bench.concurrency} (16), {@code bench.latency-ms}
 * (200), {@code bench.worker-jvm-options}, {@code bench.warmup} (the requests of a third producer, {@code warm},
 * ended before A publishes: {@value #WARMUP} by default, enough to see the worker running; a thousand or more to
 * measure a worker whose JIT has done most of its work, as one that has run for a while).
 */
final class ProducersBenchmark {

    /** Requests of producer {@code warm} ended before the measured run, unless {@code bench.warmup} says more. */
    static final int WARMUP = 50;

    /** The warm-up's calls take at most this long, whatever {@code bench.latency-ms} the measured ones take. */
    static final long WARM_CALL_MS = 100;

    private ProducersBenchmark() {}

    /** Runs the three and prints their figures; false when a request got no terminal event. */
    static boolean run() throws IOException {
        Settings settings = Settings.fromProperties();
        Benchmark.say("producers: %s", settings);
        List<Row> rows =
                Benchmark.onEmbeddedInfrastructure("image-worker-bench-producers", (infrastructure, dataDir) -> {
                    List<Row> runs = new ArrayList<>();
                    runs.addAll(run(
                            infrastructure,
                            settings,
                            "fair shares, read-ahead " + settings.readAhead(),
                            settings.readAhead()));
                    runs.addAll(run(
                            infrastructure,
                            settings,
                            "fair shares, default read-ahead (" + WorkerConfig.DEFAULT_READ_AHEAD + ")",
                            null));
                    runs.addAll(run(infrastructure, settings, "off (read-ahead 0)", 0));
                    return runs;
                });
        return printed(rows);
    }

    /**
     * Fair shares at any backlog ({@code ./mvnw -Pbench -Dbench.regime=parking}): A's backlog ({@code bench.requests},
     * 50,000) then B's 100 on a request topic of {@code bench.partitions} (6) partitions, the default read-ahead, with
     * parking ({@code IMAGE_WORKER_TOPIC_REQUEST_PARKED}, a parked topic of as many partitions) and without.
     *
     * <p>With {@code bench.until-b=true} a run ends once B's requests have ended (or after three times B's bare share
     * and two minutes), not once A's backlog has: so that calls of seconds, nearer the gateway's real ones, can be
     * measured behind the whole backlog (which would take hours to call). A's row then counts what ended meanwhile,
     * and only B's requests in the run with parking must all end. B's bare share is printed beside it: where its calls
     * would start had they been at the head of the topic, in their half of the slots.
     */
    static boolean runParking() throws IOException {
        Settings settings = Settings.fromProperties("50000");
        int partitions = Integer.parseInt(Settings.orDefault("bench.partitions", "6"));
        Benchmark.say("parking: %s, %d partitions", settings, partitions);
        List<Row> rows = Benchmark.onEmbeddedInfrastructure("image-worker-bench-parking", (infrastructure, dataDir) -> {
            List<Row> runs = new ArrayList<>();
            String parked = "bench-parked-" + UUID.randomUUID().toString().substring(0, 8);
            infrastructure.kafka().createTopics(partitions, parked);
            runs.addAll(run(
                    infrastructure,
                    settings,
                    "parking",
                    partitions,
                    Map.of("IMAGE_WORKER_TOPIC_REQUEST_PARKED", parked)));
            runs.addAll(run(infrastructure, settings, "no parking", partitions, Map.of()));
            return runs;
        });
        Benchmark.say("B's bare share: %s", bareShare(settings));
        if (!settings.untilB()) {
            return printed(rows);
        }
        Benchmark.printTable(HEADER, rows.stream().map(Row::describe).toList());
        return Benchmark.verdict(
                rows.stream()
                        .filter(row ->
                                row.label().equals("parking") && row.producer().equals("B"))
                        .allMatch(row -> row.ended() == row.sent()),
                "B's requests did not all end in the run with parking");
    }

    /**
     * Where B's calls would start, from its publication, had its requests been at the head of the topic: in half of
     * the slots (B and A take turns, equal weights), one call length a round. The nearest-rank p50 and p95.
     */
    static String bareShare(Settings settings) {
        int slots = slotsOfB(settings);
        long p50 = ((Benchmark.rank(settings.ofB(), 50) - 1) / slots) * settings.latencyMs();
        long p95 = ((Benchmark.rank(settings.ofB(), 95) - 1) / slots) * settings.latencyMs();
        return String.format(
                Locale.ROOT,
                "publication to call p50 %d ms, p95 %d ms (%d calls in %d slots)",
                p50,
                p95,
                settings.ofB(),
                slots);
    }

    /** B's slots while A's backlog waits too: half of them, equal weights. */
    private static int slotsOfB(Settings settings) {
        return Math.max(1, settings.concurrency() / 2);
    }

    private static final String HEADER = "| run | producer | requests | ended | publication to call p50 ms | p95 ms"
            + " | publication to result p50 ms | p95 ms |";

    /** Prints the rows' table and verdict: false when a request got no terminal event. */
    private static boolean printed(List<Row> rows) {
        return Benchmark.printTableAndVerdict(HEADER, rows, "requests without a terminal event");
    }

    private static List<Row> run(Infrastructure infrastructure, Settings settings, String label, Integer readAhead) {
        return run(
                infrastructure,
                settings,
                label,
                0,
                readAhead == null ? Map.of() : Map.of("IMAGE_WORKER_READ_AHEAD", Integer.toString(readAhead)));
    }

    /** One run: {@code partitions} of the request topic (0: the broker's default), the worker with {@code env} too. */
    private static List<Row> run(
            Infrastructure infrastructure, Settings settings, String label, int partitions, Map<String, String> env) {
        SimulatorSettings simulator = SimulatorSettings.unlimited(Latency.fixedMillis(settings.latencyMs()));
        try (LaunchStack stack = partitions > 0
                ? LaunchStack.on(infrastructure, simulator, partitions)
                : LaunchStack.on(infrastructure, simulator)) {
            Path gcLog = Files.createTempFile("bench-producers-", "-gc.log");
            List<String> jvm = new ArrayList<>(settings.jvmOptions());
            jvm.add("-Xlog:gc:file=" + gcLog);
            WorkerProcess.Builder builder = Benchmark.worker(stack, "bench-producers", settings.concurrency(), jvm);
            env.forEach(builder::env);
            WorkerProcess worker = builder.build();
            try (PipelineClient client =
                    new PipelineClient(infrastructure.kafkaBootstrapServers(), stack.topics(), false, result -> {})) {
                Benchmark.say("%s: starting (log %s)", label, worker.logFile());
                worker.start();
                int warmup = Math.max(WARMUP, Integer.getInteger("bench.warmup", WARMUP));
                // The warm-up's calls are short whatever the measured ones: it readies the worker, not the figures.
                stack.gateway().control().setLatency(Duration.ofMillis(Math.min(settings.latencyMs(), WARM_CALL_MS)));
                Map<String, Instant> warm = publish(client, stack.topics().request(), "warm", "warm", warmup);
                awaitEnded(client, warm, Duration.ofMinutes(2L + warmup / 1000));
                stack.gateway().reset();
                stack.gateway().control().setLatency(Duration.ofMillis(settings.latencyMs()));
                Benchmark.ProcessProbe probe = Benchmark.ProcessProbe.start(worker.pid(), gcLog);
                Instant start = Instant.now();

                Map<String, Instant> ofA = publish(client, stack.topics().request(), "a", "a", settings.backlog());
                Map<String, Instant> ofB = publish(client, stack.topics().request(), "b", "b", settings.ofB());
                Duration patience = Duration.ofSeconds(120
                        + 3L
                                * (settings.backlog() + settings.ofB())
                                * settings.latencyMs()
                                / settings.concurrency()
                                / 1000);
                if (settings.untilB()) {
                    long shareSeconds = (long) Math.ceil(settings.ofB() / (double) slotsOfB(settings))
                            * settings.latencyMs()
                            / 1000;
                    awaitEnded(client, ofB, Duration.ofSeconds(120 + 3 * shareSeconds));
                } else {
                    awaitEnded(client, ofB, patience);
                    awaitEnded(client, ofA, patience);
                }
                List<RecordedCall> calls = stack.gateway().imageCalls();
                Row a = measure(label, "A", ofA, calls, client);
                Row b = measure(label, "B", ofB, calls, client);
                Benchmark.say("%s", a.describe());
                Benchmark.say("%s", b.describe());
                Benchmark.ProcessProbe.Reading reading = probe.stop();
                Benchmark.say(
                        "%s: A's throughput %.1f requests/s; worker heap %d MB peak, %d MB after GC",
                        label,
                        a.ended()
                                * 1000.0
                                / Duration.between(start, Instant.now()).toMillis(),
                        reading.heapPeakMb(),
                        reading.heapLiveMb());
                return List.of(a, b);
            } finally {
                worker.kill();
                Files.deleteIfExists(gcLog);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Publishes {@code count} requests of {@code producer} at once; their publication instants by id. */
    private static Map<String, Instant> publish(
            PipelineClient client, String topic, String prefix, String producer, int count) {
        return PriorityBenchmark.publish(
                client,
                topic,
                prefix,
                count,
                id -> "{\"requestId\":\"" + id
                        + "\",\"prompt\":\"benchmark image " + id + "\",\"size\":\"1024x1024\",\"producer\":\""
                        + producer + "\"}");
    }

    private static void awaitEnded(PipelineClient client, Map<String, Instant> ids, Duration within) {
        PriorityBenchmark.awaitEnded(client, ids.keySet(), within);
    }

    private static Row measure(
            String label, String producer, Map<String, Instant> sent, List<RecordedCall> calls, PipelineClient client) {
        long[] called = Benchmark.sortedMillis(sent, PipelineClient.firstCalls(calls, sent.keySet()));
        Map<String, PipelineClient.Result> results = client.firstEvents(sent.keySet());
        long[] ended = results.values().stream()
                .mapToLong(result -> Duration.between(sent.get(result.requestId()), result.createdAt())
                        .toMillis())
                .sorted()
                .toArray();
        return new Row(
                label,
                producer,
                sent.size(),
                results.size(),
                Benchmark.percentile(called, 50),
                Benchmark.percentile(called, 95),
                Benchmark.percentile(ended, 50),
                Benchmark.percentile(ended, 95));
    }

    /** The figures of one producer in one run. */
    record Row(
            String label,
            String producer,
            int sent,
            int ended,
            long callP50,
            long callP95,
            long resultP50,
            long resultP95)
            implements Benchmark.SentAndEnded {

        @Override
        public String describe() {
            return String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %d | %d | %d | %d | %d |",
                    label,
                    producer,
                    sent,
                    ended,
                    callP50,
                    callP95,
                    resultP50,
                    resultP95);
        }
    }

    /** What the runs are made of. */
    record Settings(
            int concurrency,
            long latencyMs,
            int backlog,
            int ofB,
            int readAhead,
            List<String> jvmOptions,
            boolean untilB) {

        static Settings fromProperties() {
            return fromProperties("3000");
        }

        /** The settings, A's backlog {@code backlog} unless {@code bench.requests} says. */
        static Settings fromProperties(String backlogByDefault) {
            int backlog = Integer.parseInt(orDefault("bench.requests", backlogByDefault));
            int ofB = Integer.parseInt(orDefault("bench.producers-b", "100"));
            return new Settings(
                    Integer.parseInt(orDefault("bench.concurrency", "16")),
                    Long.parseLong(orDefault("bench.latency-ms", "200")),
                    backlog,
                    ofB,
                    Integer.parseInt(orDefault("bench.read-ahead", Integer.toString(backlog + ofB))),
                    Benchmark.words(orDefault("bench.worker-jvm-options", Benchmark.DEFAULT_JVM_OPTIONS)),
                    Boolean.parseBoolean(orDefault("bench.until-b", "false")));
        }

        static String orDefault(String property, String otherwise) {
            return PriorityBenchmark.Settings.orDefault(property, otherwise);
        }

        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "concurrency %d, latency %d ms, A's backlog %d, then B's %d, read-ahead of the first run %d",
                    concurrency,
                    latencyMs,
                    backlog,
                    ofB,
                    readAhead);
        }
    }
}
