package io.imageworker.testing.gateway;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.file.FileSystemOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A stand-in for the paid image gateway, on 127.0.0.1, for tests, the local run and benchmarks. It plays the gateway
 * as its specification describes it ({@link Flavour#SPEC}) or the open-source gateway as it really answers
 * ({@link Flavour#OPEN_SOURCE}): routes, envelopes, silent failures, limits, billing; it records every call, and
 * takes injected faults. It runs on its own Vert.x instance and never blocks an event loop.
 *
 * <pre>{@code
 * try (GatewaySimulator gateway = GatewaySimulator.start(SimulatorSettings.defaults())) {
 *     // point the client at gateway.baseUrl() + "/v1" with gateway.validApiKey()
 *     gateway.control().injectFault(Fault.rateLimited(2));
 *     ...
 *     assertThat(gateway.imageCalls()).hasSize(2);
 * }
 * }</pre>
 */
public final class GatewaySimulator implements AutoCloseable {

    private static final String HOST = "127.0.0.1";
    private static final long START_TIMEOUT_SECONDS = 30;

    private final Vertx vertx;
    private final SimulatorState state;
    private final SimulatorControl control;
    private final String baseUrl;
    private final AtomicBoolean closed = new AtomicBoolean();

    private GatewaySimulator(Vertx vertx, SimulatorState state, String baseUrl) {
        this.vertx = vertx;
        this.state = state;
        this.control = new SimulatorControl(state);
        this.baseUrl = baseUrl;
    }

    /** Starts both origins on 127.0.0.1 and returns once they listen. Port 0 in the settings takes a free port. */
    public static GatewaySimulator start(SimulatorSettings settings) {
        return start(settings, HOST);
    }

    /**
     * Starts both origins on {@code host} (an address or a name: also the host of {@link #baseUrl()} and of the
     * returned URLs, so a container's service name serves other containers) and returns once they listen.
     */
    public static GatewaySimulator start(SimulatorSettings settings, String host) {
        Vertx vertx = Vertx.vertx(new VertxOptions()
                .setEventLoopPoolSize(2)
                .setWorkerPoolSize(4)
                // No .vertx cache directory in the working directory.
                .setFileSystemOptions(
                        new FileSystemOptions().setFileCachingEnabled(false).setClassPathResolvingEnabled(false)));
        try {
            SimulatorState state = new SimulatorState(settings);
            // No h2c upgrade: the real gateway sits behind HTTP/1.1 proxies, and clients that offer it must fall back.
            HttpServerOptions options = new HttpServerOptions().setHost(host).setHttp2ClearTextEnabled(false);
            HttpServer files =
                    await(vertx.createHttpServer(new HttpServerOptions(options).setPort(settings.filesPort()))
                            .requestHandler(state.files)
                            .listen());
            state.files.baseUrl("http://" + host + ":" + files.actualPort());
            HttpServer gateway = await(vertx.createHttpServer(new HttpServerOptions(options).setPort(settings.port()))
                    .requestHandler(new GatewayHandler(vertx, state))
                    .listen());
            vertx.setPeriodic(Duration.ofMinutes(1).toMillis(), id -> state.files.sweep());
            return new GatewaySimulator(vertx, state, "http://" + host + ":" + gateway.actualPort());
        } catch (RuntimeException e) {
            vertx.close();
            throw e;
        }
    }

    /** The gateway origin, e.g. {@code http://127.0.0.1:43123}: no {@code /v1}, no trailing slash. */
    public String baseUrl() {
        return baseUrl;
    }

    /** The second origin that serves returned {@code url}s, e.g. {@code http://127.0.0.1:43124}. */
    public String filesBaseUrl() {
        return state.files.baseUrl();
    }

    /** The valid {@code sk-} token (it has quota unless told otherwise). */
    public String validApiKey() {
        return state.settings().apiKey();
    }

    /**
     * The settings that point a worker at this simulator with its valid key, for {@code model}. They also name the
     * host of its returned URLs in {@code image-worker.gateway.url-internal-hosts}: that origin is plain {@code http}
     * on 127.0.0.1 (or a container's private address), which the worker refuses for any host not named there.
     */
    public Map<String, String> workerSettings(String model) {
        return Map.of(
                "image-worker.gateway.base-url", baseUrl(),
                "image-worker.gateway.api-key", validApiKey(),
                "image-worker.gateway.model", model,
                "image-worker.gateway.url-internal-hosts",
                        URI.create(filesBaseUrl()).getHost());
    }

    /** Run-time controls: latency, cap, form, token, quota, faults. */
    public SimulatorControl control() {
        return control;
    }

    /** Every call since the last reset, in arrival order; a snapshot. */
    public List<RecordedCall> calls() {
        return state.calls(c -> true);
    }

    /** Only {@code POST /v1/images/generations} and {@code POST /v1/images/edits}, in arrival order. */
    public List<RecordedCall> imageCalls() {
        return state.calls(RecordedCall::isImageCall);
    }

    /** Requests to the second origin (downloads of returned URLs), in arrival order. */
    public List<RecordedDownload> downloads() {
        return state.files.downloads();
    }

    /** The most image calls in flight at once since the last reset. */
    public int maxConcurrentImageCalls() {
        return state.peak();
    }

    /** Image calls in flight now. */
    public int imageCallsInFlight() {
        return state.inFlight();
    }

    /**
     * Requests dropped unread because they came on a connection idle for longer than
     * {@link SimulatorSettings#staleAfter()}; they never reached the gateway's handler and are in no record.
     */
    public int staleDrops() {
        return state.connections.dropped();
    }

    /** Keep-alive connections open now (that carried at least one request). */
    public int openConnections() {
        return state.connections.open();
    }

    /** For each connection that closed while idle since the last reset, how long it had been idle. */
    public List<Duration> idleTimesAtClose() {
        return state.connections.idleAtClose();
    }

    /** Keep-alive connections idle now for longer than {@code idle}. */
    public int idleConnections(Duration idle) {
        return state.connections.idleLongerThan(idle);
    }

    /**
     * Clears records, downloads, stored URLs, queued faults, the peak and the bill; restores the start settings,
     * the token and its quota. Calls left hanging are ended and their connections closed.
     */
    public void reset() {
        state.reset();
    }

    /** Ends hanging calls and stops both origins. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            state.abandonHanging();
            await(vertx.close());
        }
    }

    /**
     * Standalone: {@code --host H (default 127.0.0.1) --port N --files-port N --api-key sk-... --quota N|unlimited --price N --model M
     * --latency-ms N --latency-min-ms N --latency-max-ms N --concurrency-cap N --retry-after N
     * --response-form B64|URL|MIXED --url-ratio R --url-lifetime-s N --oversize REJECT|SILENTLY_CHANGE
     * --flavour SPEC|OPEN_SOURCE --moderation-trigger TEXT}. Prints one line with the base URL and key, runs until
     * killed.
     */
    public static void main(String[] args) throws InterruptedException {
        SimulatorSettings settings;
        try {
            settings = settingsFromArgs(args);
        } catch (IllegalArgumentException e) {
            System.err.println("gateway-simulator: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        GatewaySimulator simulator = start(settings, hostFromArgs(args));
        Runtime.getRuntime().addShutdownHook(new Thread(simulator::close, "gateway-simulator-shutdown"));
        System.out.println("gateway-simulator listening on " + simulator.baseUrl() + " key=" + simulator.validApiKey());
        System.out.flush();
        new CountDownLatch(1).await();
    }

    static final String USAGE = "usage: GatewaySimulator [--host H] [--port N] [--files-port N] [--api-key sk-...]"
            + " [--quota N|unlimited] [--price N] [--model M] [--latency-ms N | --latency-min-ms N --latency-max-ms N]"
            + " [--concurrency-cap N] [--retry-after N] [--response-form B64|URL|MIXED] [--url-ratio R]"
            + " [--url-lifetime-s N] [--oversize REJECT|SILENTLY_CHANGE] [--flavour SPEC|OPEN_SOURCE]"
            + " [--moderation-trigger TEXT]";

    /** The settings a command line asks for, on top of {@link SimulatorSettings#defaults()}. */
    static SimulatorSettings settingsFromArgs(String[] args) {
        SimulatorSettings s = SimulatorSettings.defaults();
        Long latencyMin = null;
        Long latencyMax = null;
        boolean formGiven = false;
        Double ratio = null;
        for (int i = 0; i < args.length; i++) {
            String option = args[i];
            if (option.equals("--help") || option.equals("-h")) {
                throw new IllegalArgumentException("help");
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("missing value for " + option);
            }
            String value = args[++i];
            try {
                switch (option) {
                    case "--host" -> {
                        // Where to listen is not a setting of the gateway it plays: see hostFromArgs.
                    }
                    case "--port" -> s = s.withPort(Integer.parseInt(value));
                    case "--files-port" -> s = s.withFilesPort(Integer.parseInt(value));
                    case "--api-key" -> s = s.withApiKey(value);
                    case "--quota" ->
                        s = s.withQuota(
                                value.equalsIgnoreCase("unlimited")
                                        ? SimulatorSettings.UNLIMITED_QUOTA
                                        : Long.parseLong(value));
                    case "--price" -> s = s.withPricePerCall(Long.parseLong(value));
                    case "--model" -> s = s.withModel(value);
                    case "--latency-ms" -> {
                        latencyMin = Long.parseLong(value);
                        latencyMax = latencyMin;
                    }
                    case "--latency-min-ms" -> latencyMin = Long.parseLong(value);
                    case "--latency-max-ms" -> latencyMax = Long.parseLong(value);
                    case "--concurrency-cap" ->
                        s = s.withConcurrencyCap(Integer.parseInt(value), s.retryAfterSeconds());
                    case "--retry-after" -> s = s.withConcurrencyCap(s.concurrencyCap(), Integer.parseInt(value));
                    case "--response-form" -> {
                        s = s.withResponseForm(ResponseForm.valueOf(value.toUpperCase(Locale.ROOT)));
                        formGiven = true;
                    }
                    case "--url-ratio" -> ratio = Double.parseDouble(value);
                    case "--url-lifetime-s" -> s = s.withUrlLifetime(Duration.ofSeconds(Long.parseLong(value)));
                    case "--oversize" -> s = s.withOversizeMode(OversizeMode.valueOf(value.toUpperCase(Locale.ROOT)));
                    case "--flavour", "--flavor" -> s = s.withFlavour(Flavour.valueOf(value.toUpperCase(Locale.ROOT)));
                    case "--moderation-trigger" -> s = s.withModerationTrigger(value);
                    default -> throw new IllegalArgumentException("unknown option " + option);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a number for " + option + ": " + value);
            }
        }
        if (latencyMin != null || latencyMax != null) {
            long min = latencyMin == null ? latencyMax : latencyMin;
            long max = latencyMax == null ? min : latencyMax;
            s = s.withLatency(Latency.uniform(Duration.ofMillis(min), Duration.ofMillis(max)));
        }
        if (ratio != null) {
            // A ratio alone means a mixed answer form.
            s = s.withResponseForm(formGiven ? s.responseForm() : ResponseForm.MIXED, ratio);
        }
        return s;
    }

    /** The {@code --host} of a command line, 127.0.0.1 without one. */
    static String hostFromArgs(String[] args) {
        String host = HOST;
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--host")) {
                host = args[++i];
            }
        }
        return host;
    }

    private static <T> T await(Future<T> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting or stopping the gateway simulator", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("gateway simulator could not start or stop: " + e.getMessage(), e);
        }
    }
}
