package io.imageworker.testing.infra;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A real S3-compatible server (S3Proxy over a directory) in its own JVM, on a loopback port that stays the same
 * across {@link #stop()}/{@link #start()}. Path-style addressing, AWS signature v2 or v4 with fixed test credentials.
 * An object {@code key} of bucket {@code bucket} is the file {@code dataDir/bucket/key}. Start with
 * {@link #start()}; {@link #close()} ends it and deletes the data of a {@link #temporary()} server.
 */
public final class S3Server extends EmbeddedServer implements ManagedStore {

    /** The access key id the server accepts. */
    public static final String ACCESS_KEY = "image-worker";

    /** The secret key the server accepts. */
    public static final String SECRET_KEY = "image-worker-secret";

    /** The region clients sign for (S3Proxy accepts any). */
    public static final String REGION = "us-east-1";

    /**
     * A bound for a server that will not come up, not a wait: 60 s failed a loaded run (a shared 2-core machine at a
     * load of 20 to 45, three test JVMs starting their servers at once: S3Proxy took 72 s, the brokers 95 s).
     */
    private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

    private S3Server(Path dataDir, boolean temporary, int port) {
        super("s3proxy", "S3 server", "org.gaul.s3proxy.Main", "256m", dataDir, temporary, port);
    }

    /** A server on a free port whose data is deleted on close. */
    public static S3Server temporary() {
        return new S3Server(BuildPaths.temporaryDirectory("image-worker-s3"), true, 0);
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
    public URI endpoint() {
        return URI.create("http://" + ChildProcess.HOST + ":" + port());
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

    @Override
    public Optional<Path> localDataDir() {
        return Optional.of(dataDir);
    }

    @Override
    public String description() {
        return "embedded S3Proxy in its own JVM at " + endpoint() + ", objects under " + dataDir;
    }

    /** Where the object {@code key} of {@code bucket} lies on disk (whether or not it exists). */
    public Path objectPath(String bucket, String key) {
        return dataDir.resolve(bucket).resolve(key);
    }

    @Override
    String address() {
        return endpoint().toString();
    }

    @Override
    void awaitReady(BooleanSupplier alive, Supplier<String> diagnostics) {
        awaitAnswering(endpoint(), START_TIMEOUT, alive, diagnostics);
    }

    /**
     * Path-style addressing only (no {@code s3proxy.virtual-host}), as the worker uses; {@code filesystem-nio2}
     * replaces the deprecated jclouds {@code filesystem} provider, one directory per bucket.
     */
    @Override
    List<String> arguments(Path configDir) {
        Path properties = writeProperties(
                configDir,
                "s3proxy.properties",
                """
                s3proxy.endpoint=%1$s
                s3proxy.authorization=aws-v2-or-v4
                s3proxy.identity=%3$s
                s3proxy.credential=%4$s
                jclouds.provider=filesystem-nio2
                jclouds.filesystem.basedir=%2$s
                jclouds.identity=%3$s
                jclouds.credential=%4$s
                """
                        .formatted(endpoint(), dataDir.toString().replace('\\', '/'), ACCESS_KEY, SECRET_KEY));
        return List.of("--properties", properties.toString());
    }

    /**
     * Waits until {@code endpoint} answers an HTTP request, whatever the status (an unsigned request gets 403).
     *
     * @throws IllegalStateException when it does not within {@code timeout}, or {@code alive} turns false
     */
    static void awaitAnswering(URI endpoint, Duration timeout, BooleanSupplier alive, Supplier<String> diagnostics) {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        HttpRequest probe = HttpRequest.newBuilder(endpoint.resolve("/"))
                .timeout(Duration.ofSeconds(2))
                .GET()
                .build();
        Readiness.poll(
                "S3 at " + endpoint,
                "answering",
                timeout,
                Duration.ofMillis(100),
                alive,
                diagnostics,
                () -> http.send(probe, HttpResponse.BodyHandlers.discarding()).statusCode() > 0);
    }
}
