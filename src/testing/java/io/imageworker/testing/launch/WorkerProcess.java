package io.imageworker.testing.launch;

import static org.awaitility.Awaitility.await;

import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.infra.ChildProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;

/**
 * The packaged worker ({@code java -jar target/quarkus-app/quarkus-run.jar}) as a child process of this JVM, configured
 * only by the environment and JVM options given here, as a deployment configures it. Its output goes to a log file
 * under {@code target/launch-logs/} (and to this JVM's standard output when {@code echo} is on).
 *
 * <p>The environment is this JVM's, less every variable that could configure the worker behind the caller's back
 * ({@code IMAGE_WORKER_*}, {@code KAFKA_*}, {@code QUARKUS_*}, {@code MP_MESSAGING_*}, {@code AWS_*}), plus the given
 * variables. The HTTP port ({@code QUARKUS_HTTP_PORT}) is chosen free once and kept across restarts, on 127.0.0.1.
 *
 * <pre>{@code
 * try (WorkerProcess worker = WorkerProcess.builder()
 *         .env("KAFKA_BOOTSTRAP_SERVERS", kafka)
 *         .env("IMAGE_WORKER_GATEWAY_BASE_URL", gateway.baseUrl())
 *         ...
 *         .build()
 *         .start()) {          // returns once /q/health/ready answers 200
 *     worker.kill();           // SIGKILL
 *     worker.start();
 * }
 * }</pre>
 *
 * <p>A shutdown hook ends a worker still running when this JVM exits normally or on Ctrl-C; a worker whose parent was
 * killed with SIGKILL is not ended (the worker has no way to notice): stop it by the pid in its log's header line.
 */
public final class WorkerProcess extends ChildProcess implements AutoCloseable {

    /** Time allowed from the start of the process to a ready worker, unless the builder says otherwise. */
    public static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(90);

    /** Time a worker has to exit after SIGTERM before it is killed; above the shutdown grace the tests give it. */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(75);

    private static final List<String> CLEARED_PREFIXES =
            List.of("IMAGE_WORKER_", "KAFKA_", "QUARKUS_", "MP_MESSAGING_", "AWS_");

    /** Whether an environment variable of this JVM's could configure a worker behind the caller's back. */
    static boolean configuresAWorker(String variable) {
        return CLEARED_PREFIXES.stream().anyMatch(variable::startsWith);
    }

    private final String name;
    private final Map<String, String> environment;
    private final List<String> jvmOptions;
    private final int port;
    private final boolean echo;
    private final Duration startTimeout;
    private final List<String> command;
    private final boolean httpReadiness;
    private final HttpClient http;
    private Thread pump;
    private int starts;
    private boolean hookAdded;
    private volatile Exit lastExit;

    private WorkerProcess(Builder builder, int port) {
        super(
                builder.name,
                builder.logFile != null
                        ? builder.logFile
                        : BuildPaths.directory("launch-logs").resolve(builder.name + "-" + port + ".log"),
                STOP_TIMEOUT);
        this.name = builder.name;
        this.port = port;
        Map<String, String> env = new LinkedHashMap<>(builder.environment);
        env.put("QUARKUS_HTTP_HOST", HOST);
        env.put("QUARKUS_HTTP_PORT", Integer.toString(port));
        this.environment = Map.copyOf(env);
        this.jvmOptions = List.copyOf(builder.jvmOptions);
        this.echo = builder.echo;
        this.startTimeout = builder.startTimeout;
        this.command = builder.command == null ? null : List.copyOf(builder.command);
        this.httpReadiness = builder.httpReadiness;
        this.http = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(2))
                .version(HttpClient.Version.HTTP_1_1)
                .build();
        try {
            Files.createDirectories(logFile().getParent());
            Files.deleteIfExists(logFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A builder: give at least the Kafka, storage and gateway settings as environment variables. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts the process and returns once {@code /q/health/ready} answers 200. Does nothing when it runs.
     *
     * @throws IllegalStateException when it exits or is not ready within the start timeout (the process is then
     *     killed), with the end of its log
     */
    public synchronized WorkerProcess start() {
        if (isAlive()) {
            return this;
        }
        launch();
        if (!httpReadiness) {
            return this;
        }
        try {
            awaitReady(startTimeout);
        } catch (IllegalStateException e) {
            super.kill();
            throw e;
        }
        return this;
    }

    /** Whether this worker's JVM options, on its command or in its {@code JAVA_TOOL_OPTIONS}, name an AOT cache. */
    private boolean usesAnAotCache() {
        return jvmOptions.stream().anyMatch(option -> option.startsWith("-XX:AOTCache="))
                || environment.getOrDefault("JAVA_TOOL_OPTIONS", "").contains("-XX:AOTCache=");
    }

    private void launch() {
        List<String> command = new ArrayList<>();
        if (this.command != null) {
            command.addAll(this.command);
        } else {
            String java = javaCommand();
            Path jar = BuildPaths.workerJar();
            command.add(java);
            if (!usesAnAotCache()) {
                // A JVM takes one of the two: the AOT cache (the benchmark's contestant as the image starts it) wins.
                command.addAll(WorkerClassArchive.jvmOptions(java, jar));
            }
            command.addAll(jvmOptions);
            command.add("-jar");
            command.add(jar.toString());
        }
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.directory(BuildPaths.buildDir().toFile());
        builder.environment().keySet().removeIf(WorkerProcess::configuresAWorker);
        builder.environment().putAll(environment);
        if (echo) {
            builder.redirectOutput(ProcessBuilder.Redirect.PIPE);
        } else {
            builder.redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()));
        }
        starts++;
        Process process = launch(builder, "start #" + starts + ": " + String.join(" ", command));
        running(process);
        appendToLog("==== pid " + process.pid());
        if (echo) {
            pump = new Thread(() -> copyOutput(process), name + "-output");
            pump.setDaemon(true);
            pump.start();
        }
        if (!hookAdded) {
            hookAdded = true;
            Runtime.getRuntime().addShutdownHook(new Thread(this::stopAtExit, name + "-stop-at-exit"));
        }
    }

    /**
     * Waits until {@code /q/health/ready} answers 200.
     *
     * @throws IllegalStateException when the process exits or is not ready within {@code timeout}
     */
    public void awaitReady(Duration timeout) {
        Process running = process();
        if (running == null) {
            throw new IllegalStateException(name + " is not started");
        }
        try {
            await(name + " ready at " + readyUrl())
                    .atMost(timeout)
                    .pollDelay(Duration.ofMillis(200))
                    .pollInterval(Duration.ofMillis(250))
                    .failFast(name + " exited", () -> !running.isAlive())
                    .until(this::isReady);
        } catch (ConditionTimeoutException | TerminalFailureException e) {
            String exit = running.isAlive() ? "" : " (exit status " + running.exitValue() + ")";
            throw new IllegalStateException(
                    name + " did not become ready within " + timeout + exit + ": " + e.getMessage() + describeLog(), e);
        }
    }

    /** Whether {@code /q/health/ready} answers 200 now. */
    public boolean isReady() {
        return health("ready").status() == 200;
    }

    /** Whether {@code /q/health/live} answers 200 now. */
    public boolean isLive() {
        return health("live").status() == 200;
    }

    /**
     * What {@code /q/health/<check>} ({@code live}, {@code ready}, {@code started}) answers now: its status and body
     * (SmallRye Health's JSON, with each check's data); status 0 when the worker does not answer.
     */
    public Health health(String check) {
        try {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create("http://" + HOST + ":" + port + "/q/health/" + check))
                            .timeout(Duration.ofSeconds(3))
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Health(response.statusCode(), response.body());
        } catch (IOException e) {
            return new Health(0, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Health(0, e.toString());
        }
    }

    /** An answer of a health endpoint. */
    public record Health(int status, String body) {}

    /**
     * The sum of a metric's series in {@code /q/metrics} (Prometheus text), whatever their labels, e.g.
     * {@code image_worker_gateway_calls_waiting}; empty when it is not exported or the worker does not answer.
     */
    public OptionalDouble metric(String name) {
        try {
            HttpResponse<java.util.stream.Stream<String>> response = http.send(
                    HttpRequest.newBuilder(metricsUrl())
                            .timeout(Duration.ofSeconds(3))
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofLines());
            try (java.util.stream.Stream<String> lines = response.body()) {
                double[] values = lines.filter(line -> line.startsWith(name + " ") || line.startsWith(name + "{"))
                        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                        .toArray();
                return values.length == 0
                        ? OptionalDouble.empty()
                        : OptionalDouble.of(Arrays.stream(values).sum());
            }
        } catch (IOException e) {
            return OptionalDouble.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return OptionalDouble.empty();
        }
    }

    /** Hard stop: SIGKILL, as if the machine lost power under the worker. Returns once the process is gone. */
    @Override
    public synchronized void kill() {
        if (process() != null) {
            appendToLog("==== " + Instant.now() + " " + name + " killed (SIGKILL)");
            super.kill();
        }
    }

    /**
     * Graceful stop: SIGTERM, then waits for the exit (the worker finishes requests in progress within its shutdown
     * grace); killed if it takes longer than 75 s. Does nothing when it does not run.
     */
    @Override
    public synchronized void stop() {
        Process stopping = process();
        if (stopping != null) {
            super.stop();
            String exit = stopping.isAlive() ? "still running" : "exit status " + stopping.exitValue();
            appendToLog("==== " + Instant.now() + " " + name + " stopped (SIGTERM), " + exit);
        }
    }

    @Override
    protected void ended(Process ended, boolean killed) {
        joinPump();
        if (!ended.isAlive()) {
            lastExit = new Exit(ended.exitValue(), Instant.now(), killed);
        }
    }

    /** {@link #stop()} then {@link #start()}, on the same port. */
    public synchronized WorkerProcess restart() {
        stop();
        return start();
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    /**
     * Runs {@code action} ({@link #start()}, {@link #stop()}, {@link #close()}) on every worker at once, each on a
     * thread of its own, and returns when it has ended on each: replicas start and stop side by side, as an
     * orchestrator starts them, instead of each waiting for the one before.
     */
    public static void together(Collection<WorkerProcess> workers, Consumer<WorkerProcess> action) {
        CompletableFuture.allOf(workers.stream()
                        .map(worker -> CompletableFuture.runAsync(() -> action.accept(worker)))
                        .toArray(CompletableFuture[]::new))
                .join();
    }

    private void stopAtExit() {
        Process running = process();
        if (running != null && running.isAlive()) {
            running.destroy();
            if (!waitForExit(running, STOP_TIMEOUT)) {
                running.destroyForcibly();
            }
        }
    }

    /** The process id of the running worker. */
    public synchronized long pid() {
        if (process() == null) {
            throw new IllegalStateException(name + " is not running");
        }
        return process().pid();
    }

    /** How the last process of this worker ended, if one did: by {@link #kill()}, {@link #stop()} or a failed start. */
    public Optional<Exit> lastExit() {
        return Optional.ofNullable(lastExit);
    }

    /** How many times the process was started. */
    public synchronized int starts() {
        return starts;
    }

    /** The HTTP port of health and metrics. */
    public int port() {
        return port;
    }

    /** {@code http://127.0.0.1:<port>/q/health/ready}. */
    public URI readyUrl() {
        return URI.create("http://" + HOST + ":" + port + "/q/health/ready");
    }

    /** {@code http://127.0.0.1:<port>/q/metrics}. */
    public URI metricsUrl() {
        return URI.create("http://" + HOST + ":" + port + "/q/metrics");
    }

    /** The environment the worker gets on top of the cleared inherited one (including the HTTP port). */
    public Map<String, String> environment() {
        return environment;
    }

    private void joinPump() {
        if (pump != null) {
            try {
                pump.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            pump = null;
        }
    }

    private void copyOutput(Process source) {
        PrintStream console = System.out;
        try (BufferedReader in =
                        new BufferedReader(new InputStreamReader(source.getInputStream(), StandardCharsets.UTF_8));
                Writer log = Files.newBufferedWriter(
                        logFile(), StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            String line;
            while ((line = in.readLine()) != null) {
                log.write(line);
                log.write(System.lineSeparator());
                log.flush();
                console.println("[" + name + "] " + line);
            }
        } catch (IOException e) {
            // The process is gone; what it wrote before is in the log.
        }
    }

    /** The {@code java} launcher running this JVM, so that the worker runs on the same Java. */
    static String javaCommand() {
        return WorkerJava.command();
    }

    /**
     * The end of one process.
     *
     * @param status its exit status (143 is SIGTERM's, 137 SIGKILL's when the JVM did not handle the signal)
     * @param at when this JVM saw it gone (shortly after it exited)
     * @param killed whether it was ended by SIGKILL ({@link #kill()}, or a stop that outlasted its grace)
     */
    public record Exit(int status, Instant at, boolean killed) {}

    /** Settings of a {@link WorkerProcess}. */
    public static final class Builder {
        private String name = "worker";
        private final Map<String, String> environment = new LinkedHashMap<>();
        private final List<String> jvmOptions = new ArrayList<>();
        private int port;
        private Path logFile;
        private boolean echo;
        private Duration startTimeout = DEFAULT_START_TIMEOUT;
        private List<String> command;
        private boolean httpReadiness = true;

        private Builder() {}

        /**
         * Another program to run instead of the packaged worker (for a benchmark's yardstick), with the same
         * environment; {@link #jvmOptions} do not apply to it.
         */
        public Builder command(List<String> value) {
            this.command = List.copyOf(value);
            return this;
        }

        /**
         * Whether {@link WorkerProcess#start()} waits for {@code /q/health/ready} (default); a program without that
         * endpoint is taken as started once launched, and its caller waits for its first results instead.
         */
        public Builder httpReadiness(boolean value) {
            this.httpReadiness = value;
            return this;
        }

        /** The name in log lines and of the log file ({@code <name>-<port>.log}); default {@code worker}. */
        public Builder name(String value) {
            this.name = Objects.requireNonNull(value);
            return this;
        }

        /** One environment variable of the worker, e.g. {@code IMAGE_WORKER_CONCURRENCY}. */
        public Builder env(String variable, String value) {
            environment.put(variable, Objects.requireNonNull(value, variable));
            return this;
        }

        /** Several environment variables. */
        public Builder env(Map<String, String> variables) {
            variables.forEach(this::env);
            return this;
        }

        /**
         * A consumer session of 6 s (the broker's minimum) instead of 15 s, heartbeats every second: a killed worker's
         * partitions move to another sooner.
         */
        public Builder shortConsumerSession() {
            return jvmOptions(List.of(
                    "-Dmp.messaging.incoming.requests.session.timeout.ms=6000",
                    "-Dmp.messaging.incoming.requests.heartbeat.interval.ms=1000"));
        }

        /**
         * The JVM of the launch and fault tests' workers: a small heap that ends the process when it runs out, and a
         * {@link #shortConsumerSession()}.
         */
        public Builder smallJvm() {
            return jvmOptions(List.of("-Xms128m", "-Xmx512m", "-XX:+ExitOnOutOfMemoryError"))
                    .shortConsumerSession();
        }

        /** JVM options before {@code -jar}, e.g. {@code -Xmx512m}. */
        public Builder jvmOptions(List<String> options) {
            jvmOptions.addAll(options);
            return this;
        }

        /** The HTTP port; default a free one. */
        public Builder port(int value) {
            this.port = value;
            return this;
        }

        /** Where the output goes (appended per start); default {@code target/launch-logs/<name>-<port>.log}. */
        public Builder logFile(Path value) {
            this.logFile = value;
            return this;
        }

        /** Also print the worker's output on this JVM's standard output, each line prefixed by the name. */
        public Builder echo(boolean value) {
            this.echo = value;
            return this;
        }

        /** Time allowed for a start until ready; default 90 s. */
        public Builder startTimeout(Duration value) {
            this.startTimeout = Objects.requireNonNull(value);
            return this;
        }

        /** The process description; nothing runs until {@link WorkerProcess#start()}. */
        public WorkerProcess build() {
            return new WorkerProcess(this, port != 0 ? port : ChildProcess.freePort());
        }
    }
}
