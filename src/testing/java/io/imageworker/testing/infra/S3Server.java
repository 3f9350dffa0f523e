package io.imageworker.testing.infra;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;
import org.jboss.logging.Logger;

/**
 * A real S3-compatible server (S3Proxy over a directory) in its own JVM, on a loopback port that stays the same
 * across {@link #stop()}/{@link #start()}. Path-style addressing, AWS signature v2 or v4 with fixed test credentials.
 * An object {@code key} of bucket {@code bucket} is the file {@code dataDir()/bucket/key}. Start with
 * {@link #start()}; {@link #close()} ends it and deletes the data of a {@link #temporary()} server.
 */
public final class S3Server implements ManagedStore, AutoCloseable {

    /** The access key id the server accepts. */
    public static final String ACCESS_KEY = "image-worker";

    /** The secret key the server accepts. */
    public static final String SECRET_KEY = "image-worker-secret";

    /** The region clients sign for (S3Proxy accepts any). */
    public static final String REGION = "us-east-1";

    private static final Logger LOG = Logger.getLogger(S3Server.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final Path dataDir;
    private final Path configDir;
    private final boolean temporary;
    private final int port;
    private final ChildJvm jvm;
    private boolean logAnnounced;

    private S3Server(Path dataDir, boolean temporary, int port) {
        this.dataDir = dataDir;
        this.temporary = temporary;
        this.port = port == 0 ? ChildJvm.freePort() : port;
        try {
            Files.createDirectories(dataDir);
            this.configDir = Files.createTempDirectory("image-worker-s3proxy-config");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path properties = writeProperties();
        Path logFile = ChildJvm.logDir().resolve("s3proxy-" + this.port + ".log");
        try {
            Files.deleteIfExists(logFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.jvm = new ChildJvm(
                "s3proxy",
                ChildJvm.serverJvmOptions("256m", ChildJvm.writeLogbackConfig(configDir)),
                "org.gaul.s3proxy.Main",
                List.of("--properties", properties.toString()),
                logFile);
    }

    /** A server on a free port whose data is deleted on close. */
    public static S3Server temporary() {
        try {
            return new S3Server(Files.createTempDirectory("image-worker-s3"), true, 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A server whose objects live in {@code dataDir} and outlive it (a local run keeps its images across runs).
     *
     * @param port the HTTP port, or 0 for a free one
     */
    public static S3Server persistent(Path dataDir, int port) {
        return new S3Server(dataDir.toAbsolutePath(), false, port);
    }

    @Override
    public ServerMode mode() {
        return ServerMode.EMBEDDED;
    }

    /**
     * Starts the server and returns once it answers HTTP. Does nothing when it runs.
     *
     * @throws IllegalStateException when it does not come up; the message quotes the end of its log
     */
    @Override
    public synchronized void start() {
        if (jvm.isAlive()) {
            return;
        }
        long started = System.nanoTime();
        if (!logAnnounced) {
            LOG.infof("S3 server log: %s", jvm.logFile());
            logAnnounced = true;
        }
        jvm.start();
        awaitAnswering(endpoint(), START_TIMEOUT, jvm::isAlive, jvm::describeLog);
        LOG.infof("S3 server ready at %s after %d ms", endpoint(), (System.nanoTime() - started) / 1_000_000);
    }

    /** Stops the server gracefully (SIGTERM) and waits for it to exit; objects and port stay for {@link #start()}. */
    @Override
    public synchronized void stop() {
        jvm.stop();
    }

    /** Kills the server (SIGKILL). */
    public synchronized void kill() {
        jvm.kill();
    }

    /** Whether the server process runs. */
    public boolean isRunning() {
        return jvm.isAlive();
    }

    @Override
    public URI endpoint() {
        return URI.create("http://" + ChildJvm.HOST + ":" + port);
    }

    @Override
    public String accessKey() {
        return ACCESS_KEY;
    }

    @Override
    public String secretKey() {
        return SECRET_KEY;
    }

    @Override
    public String region() {
        return REGION;
    }

    /** The HTTP port. */
    public int port() {
        return port;
    }

    /** The directory holding the buckets, one subdirectory each. */
    public Path dataDir() {
        return dataDir;
    }

    @Override
    public Optional<Path> localDataDir() {
        return Optional.of(dataDir);
    }

    /** Where the object {@code key} of {@code bucket} lies on disk (whether or not it exists). */
    public Path objectPath(String bucket, String key) {
        return dataDir.resolve(bucket).resolve(key);
    }

    /** The server's log file, under {@code target/infra-logs/}. */
    public Path logFile() {
        return jvm.logFile();
    }

    /**
     * Ends the server: a temporary one is killed and its data deleted, a persistent one is stopped gracefully and its
     * data kept.
     */
    @Override
    public synchronized void close() {
        if (temporary) {
            jvm.kill();
            ChildJvm.deleteTree(dataDir);
        } else {
            jvm.stop();
        }
        ChildJvm.deleteTree(configDir);
    }

    private Path writeProperties() {
        Properties config = new Properties();
        config.setProperty("s3proxy.endpoint", endpoint().toString());
        config.setProperty("s3proxy.authorization", "aws-v2-or-v4");
        config.setProperty("s3proxy.identity", ACCESS_KEY);
        config.setProperty("s3proxy.credential", SECRET_KEY);
        // No s3proxy.virtual-host: path-style addressing only, as the worker uses.
        // filesystem-nio2 replaces the deprecated jclouds "filesystem" provider; one directory per bucket.
        config.setProperty("jclouds.provider", "filesystem-nio2");
        config.setProperty("jclouds.filesystem.basedir", dataDir.toString());
        config.setProperty("jclouds.identity", ACCESS_KEY);
        config.setProperty("jclouds.credential", SECRET_KEY);
        Path file = configDir.resolve("s3proxy.properties");
        try (var out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            config.store(out, "image-worker test S3 server");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /**
     * Waits until {@code endpoint} answers an HTTP request, whatever the status (an unsigned request gets 403).
     *
     * @throws IllegalStateException when it does not within {@code timeout}, or {@code alive} turns false
     */
    static void awaitAnswering(
            URI endpoint,
            Duration timeout,
            java.util.function.BooleanSupplier alive,
            java.util.function.Supplier<String> diagnostics) {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        HttpRequest probe = HttpRequest.newBuilder(endpoint.resolve("/"))
                .timeout(Duration.ofSeconds(2))
                .GET()
                .build();
        try {
            await("S3 at " + endpoint + " answering")
                    .atMost(timeout)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(100))
                    .ignoreExceptions()
                    .failFast("the S3 server process exited", () -> !alive.getAsBoolean())
                    .until(() -> http.send(probe, HttpResponse.BodyHandlers.discarding())
                                    .statusCode()
                            > 0);
        } catch (ConditionTimeoutException | TerminalFailureException e) {
            throw new IllegalStateException(
                    "S3 at " + endpoint + " did not become ready: " + e.getMessage() + diagnostics.get(), e);
        }
    }
}
