package io.imageworker.testing.launch;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.BuildPaths;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The whole pipeline on this machine, for a person to try: an embedded Kafka broker and S3 server (data kept under
 * {@code target/local-run/}), the gateway simulator with a realistic latency, and the packaged worker as a child
 * process. Requests are typed in (or read from a file); each result is printed as it arrives, with where the image
 * lies on disk.
 *
 * <p>Run it with {@code ./mvnw -Plocal} (packages the worker without tests, then runs this). Input, one request a
 * line:
 *
 * <ul>
 *   <li>a line that starts with <code>{</code> is a whole request, published as is;
 *   <li>any other non-blank line is a prompt, published as {@code {"requestId":"local-<n>","prompt":"<line>"}}.
 * </ul>
 *
 * <p>At the end of input (Ctrl-D, the end of a piped input or of the file) it waits for the results of what was
 * submitted, then stops everything; Ctrl-C stops at once. Arguments: an optional file of requests, read instead of
 * the standard input. System properties (with {@code ./mvnw -Plocal -Dlocal.concurrency=8} and so on):
 *
 * <ul>
 *   <li>{@code local.data-dir}: where the broker and the store keep their data; default {@code target/local-run};
 *   <li>{@code local.concurrency}: {@code IMAGE_WORKER_CONCURRENCY}; default 4;
 *   <li>{@code local.latency-min-ms}, {@code local.latency-max-ms}: the simulator's latency, uniform; default 2000
 *       and 5000;
 *   <li>{@code local.kafka-port}, {@code local.s3-port}, {@code local.worker-port}: fixed ports; default free ones;
 *   <li>{@code local.echo-worker}: also print the worker's log lines; default false;
 *   <li>{@code local.result-wait-s}: how long the end of input waits for outstanding results; default 300.
 * </ul>
 */
public final class LocalRun {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss");
    private static final Pattern LOCAL_ID = Pattern.compile("local-(\\d+)\\.json");

    private final Map<String, Long> outstanding = new ConcurrentHashMap<>();
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final AtomicLong counter = new AtomicLong();
    private LaunchStack stack;
    private WorkerProcess worker;
    private PipelineClient client;

    private LocalRun() {}

    public static void main(String[] arguments) {
        // An empty argument is no argument: ./mvnw -Plocal passes ${local.requests}, empty unless set.
        String[] args =
                java.util.Arrays.stream(arguments).filter(a -> !a.isBlank()).toArray(String[]::new);
        if (args.length > 1 || args.length == 1 && (args[0].equals("-h") || args[0].equals("--help"))) {
            System.err.println("usage: LocalRun [requests-file]   (one request a line: a JSON request or a prompt)");
            System.exit(2);
        }
        LaunchLogging.quiet();
        LocalRun run = new LocalRun();
        Runtime.getRuntime().addShutdownHook(new Thread(run::stop, "local-run-stop"));
        int status = 1;
        try {
            run.start();
            status = run.submitAll(args.length == 1 ? Path.of(args[0]) : null);
        } catch (RuntimeException e) {
            System.err.println("local run failed: " + e.getMessage());
            e.printStackTrace();
        } finally {
            // Whatever ended the run, an error included, the servers and the worker it started stop with it.
            run.stop();
        }
        System.exit(status);
    }

    /** The local run's cancel topic, for the console's cancel button. */
    static final String CANCELS = "image-cancel";

    /** The local run's status topic: the console shows a request calling. */
    static final String STATUS = "image-status";

    private void start() {
        Path dataDir = Path.of(System.getProperty(
                        "local.data-dir",
                        BuildPaths.buildDir().resolve("local-run").toString()))
                .toAbsolutePath();
        int concurrency = Integer.getInteger("local.concurrency", 4);
        Latency latency = Latency.uniform(
                Duration.ofMillis(Long.getLong("local.latency-min-ms", 2_000)),
                Duration.ofMillis(Long.getLong("local.latency-max-ms", 5_000)));
        say("Starting Kafka and S3 (data in " + dataDir + ") and the gateway simulator ...");
        stack = LaunchStack.startEmbedded(
                dataDir,
                Integer.getInteger("local.kafka-port", 0),
                Integer.getInteger("local.s3-port", 0),
                SimulatorSettings.unlimited(latency));
        counter.set(highestLocalId(dataDir));
        // The console (issue 52) is on, with its actions: a page to send prompts, cancel them and see the images.
        stack.infrastructure().kafka().createTopics(CANCELS, STATUS);
        worker = WorkerProcess.builder()
                .env(stack.workerEnvironment(concurrency))
                // A quick Ctrl-C: requests in progress get 10 s to finish, the rest is redelivered next time.
                .env("IMAGE_WORKER_SHUTDOWN_GRACE", "10s")
                .env("IMAGE_WORKER_TOPIC_CANCEL", CANCELS)
                .env("IMAGE_WORKER_TOPIC_STATUS", STATUS)
                .env("IMAGE_WORKER_CONSOLE_ENABLED", "true")
                .env("IMAGE_WORKER_CONSOLE_ACTIONS", "cancel,submit")
                .port(Integer.getInteger("local.worker-port", 0))
                .echo(Boolean.getBoolean("local.echo-worker"))
                .jvmOptions(aotCache())
                .build();
        say("Starting the packaged worker (log: " + worker.logFile() + ") ...");
        worker.start();
        client = new PipelineClient(
                stack.infrastructure().kafkaBootstrapServers(), stack.topics(), true, this::printResult);
        printBanner(dataDir, concurrency, latency);
    }

    /**
     * The worker's AOT cache, as the image starts it, when this build trained one ({@code -Paot}, before {@code local}
     * in the same command) and this JVM can use it (JDK 25 or later; a cache another JVM trained is refused by the JVM
     * with a warning, and the worker starts without it); else nothing.
     */
    private static List<String> aotCache() {
        Path cache = BuildPaths.buildDir().resolve(AotTraining.CACHE);
        if (Runtime.version().feature() < 25 || !Files.isRegularFile(cache)) {
            return List.of();
        }
        say("Starting the worker with its AOT cache " + cache);
        return List.of("-XX:AOTCache=" + cache);
    }

    /** Publishes every line of the file (or of the standard input), then waits for the outstanding results. */
    private int submitAll(Path file) {
        try (BufferedReader in = file != null
                ? Files.newBufferedReader(file, StandardCharsets.UTF_8)
                : new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            RequestLines lines = new RequestLines(in);
            String line;
            while (!stopped.get()
                    && (line = lines.next(length -> say("skipped a line of " + length + " characters: longer than "
                                    + RequestLines.MAX_CHARS + ", no request")))
                            != null) {
                submit(line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the requests", e);
        }
        if (stopped.get()) {
            return 0;
        }
        if (outstanding.isEmpty()) {
            say("End of input; nothing outstanding. Stopping.");
            return 0;
        }
        Duration wait = Duration.ofSeconds(Long.getLong("local.result-wait-s", 300));
        say("End of input; waiting up to " + wait.toSeconds() + " s for " + outstanding.size() + " outstanding: "
                + String.join(", ", outstanding.keySet()));
        try {
            await("outstanding results")
                    .atMost(wait)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> outstanding.isEmpty() || stopped.get());
        } catch (ConditionTimeoutException e) {
            say("No result within " + wait.toSeconds() + " s for: " + String.join(", ", outstanding.keySet()) + "; see "
                    + worker.logFile());
            return 1;
        }
        say("Every submitted request has its result. Stopping.");
        return 0;
    }

    private void submit(String raw) {
        String line = raw.strip();
        if (line.isEmpty()) {
            return;
        }
        String requestId;
        String json;
        if (line.startsWith("{")) {
            json = line;
            requestId = requestIdOf(line);
        } else {
            requestId = "local-" + counter.incrementAndGet();
            ObjectNode request =
                    JSON.createObjectNode().put("requestId", requestId).put("prompt", line);
            json = request.toString();
        }
        if (requestId != null) {
            outstanding.put(requestId, System.nanoTime());
        }
        try {
            var sent = client.send(requestId, json);
            say("sent " + (requestId != null ? requestId : "a record without a usable requestId (it goes to the DLQ)")
                    + " to " + sent.topic() + "-" + sent.partition() + "@" + sent.offset() + ": " + abbreviate(json));
        } catch (RuntimeException e) {
            if (requestId != null) {
                outstanding.remove(requestId);
            }
            say("could not send: " + e.getMessage());
        }
    }

    private static String requestIdOf(String json) {
        try {
            JsonNode node = JSON.readTree(json);
            return node.path("requestId").isTextual() ? node.get("requestId").asText() : null;
        } catch (IOException e) {
            return null;
        }
    }

    private void printResult(PipelineClient.Result result) {
        Long sentAt = result.requestId() == null ? null : outstanding.get(result.requestId());
        String after = sentAt == null ? "" : String.format(" after %.1f s", (result.receivedNanos() - sentAt) / 1e9);
        StringBuilder out = new StringBuilder();
        if (result.completed()) {
            String key = result.imageKey();
            out.append("completed ").append(result.requestId()).append(after).append(": ");
            out.append(result.text("image", "uri")).append(", ");
            out.append(result.text("image", "width")).append('x').append(result.text("image", "height"));
            out.append(", ").append(result.text("image", "bytes")).append(" bytes, sha256 ");
            out.append(abbreviate(result.sha256(), 16));
            String bucket = result.text("image", "bucket");
            stack.objectPath(bucket == null ? LaunchStack.BUCKET : bucket, key)
                    .ifPresent(path -> out.append(System.lineSeparator())
                            .append("           stored at ")
                            .append(path)
                            .append(Files.exists(path) ? "" : " (not found on disk)"));
        } else {
            out.append("failed    ").append(result.requestId()).append(after).append(": ");
            out.append(result.errorCode()).append(": ").append(result.text("error", "message"));
        }
        say(out.toString());
        // Only now: the end of input waits for this, and must not report the end before the result is printed.
        if (result.requestId() != null) {
            outstanding.remove(result.requestId());
        }
    }

    private void printBanner(Path dataDir, int concurrency, Latency latency) {
        String kafka = stack.infrastructure().kafkaBootstrapServers();
        LaunchStack.Topics topics = stack.topics();
        String images = stack.objectPath(LaunchStack.BUCKET, "images/")
                .map(Path::toString)
                .orElse("(not on this machine)");
        String line = "=".repeat(100);
        List<String> lines = List.of(
                line,
                " image-worker local run: ready",
                "",
                " Kafka bootstrap    " + kafka,
                "   topics           " + topics.request() + " (in), " + topics.completed() + ", " + topics.failed()
                        + ", " + topics.dlq() + " (out)",
                " S3 endpoint        " + stack.infrastructure().s3Endpoint() + "  bucket " + LaunchStack.BUCKET
                        + "  (path-style, access key " + stack.infrastructure().s3AccessKey() + ", secret "
                        + stack.infrastructure().s3SecretKey() + ")",
                " Stored images      " + images,
                " Gateway simulator  " + stack.gateway().baseUrl() + "  (latency "
                        + latency.min().toMillis() + "-" + latency.max().toMillis() + " ms)",
                " Worker             pid " + worker.pid() + ", concurrency " + concurrency + ", health "
                        + worker.readyUrl(),
                " Console            http://localhost:" + worker.port() + "/console  (send a prompt, cancel, see"
                        + " the images)",
                " Worker log         " + worker.logFile(),
                " Server logs        " + BuildPaths.buildDir().resolve("infra-logs"),
                " Data               " + dataDir + "  (kept between runs; delete it to start afresh)",
                "",
                " Submit: type a prompt and press Enter; it is sent as {\"requestId\":\"local-<n>\",\"prompt\":...}.",
                "         A line starting with { is sent as is, e.g.",
                "         {\"requestId\":\"wide-1\",\"prompt\":\"a lighthouse at dusk\",\"size\":\"16:9\"}",
                "         The same requestId is the same request: reusing one replays its recorded result.",
                "         Ctrl-D ends the input (waits for the outstanding results); Ctrl-C stops at once.",
                line);
        lines.forEach(System.out::println);
        System.out.flush();
    }

    /** Ends the worker (SIGTERM), the client, the simulator and the servers; once, whoever calls first. */
    private void stop() {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        if (worker != null) {
            say("Stopping the worker ...");
            worker.stop();
        }
        if (client != null) {
            client.close();
        }
        if (stack != null) {
            say("Stopping the simulator, Kafka and S3 ...");
            stack.close();
        }
        say("Stopped.");
    }

    /** The highest {@code n} of a {@code local-<n>} result already stored, so that new prompts get new ids. */
    private static long highestLocalId(Path dataDir) {
        Path results = dataDir.resolve("s3").resolve(LaunchStack.BUCKET).resolve("results");
        if (!Files.isDirectory(results)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(results)) {
            return files.map(path -> LOCAL_ID.matcher(path.getFileName().toString()))
                    .filter(Matcher::matches)
                    .mapToLong(matcher -> Long.parseLong(matcher.group(1)))
                    .max()
                    .orElse(0);
        } catch (IOException e) {
            return 0;
        }
    }

    private static String abbreviate(String text) {
        return abbreviate(text, 160);
    }

    private static String abbreviate(String text, int max) {
        if (text == null) {
            return "null";
        }
        return text.length() <= max ? text : text.substring(0, max) + "...";
    }

    private static void say(String message) {
        System.out.println("[" + LocalTime.now().format(CLOCK) + "] " + message);
        System.out.flush();
    }
}
