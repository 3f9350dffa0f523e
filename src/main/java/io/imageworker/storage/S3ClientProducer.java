package io.imageworker.storage;

import io.imageworker.support.WorkerThreads;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import java.net.URI;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.client.config.SdkAdvancedAsyncClientOption;
import software.amazon.awssdk.crt.CRT;
import software.amazon.awssdk.http.async.SdkAsyncHttpClient;
import software.amazon.awssdk.http.crt.AwsCrtAsyncHttpClient;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.http.nio.netty.SdkEventLoopGroup;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * Builds the AWS SDK v2 asynchronous S3 client (non-blocking) and its presigner from the storage settings: AWS by
 * default, or any S3-compatible endpoint with path-style access. At most {@code storage.max-connections} connections;
 * the SDK completes its futures on a fixed pool of its own (not its default pool, which grows up to 64 threads under
 * load), so the worker's threads do not grow with the load. Uploads do not wait for a {@code 100 Continue}: the client
 * asks for one on every upload above 1 MiB (most images), which makes the PUT wait one more round trip for the store's
 * go-ahead before the body leaves; it saves sending a body the store would refuse on sight (a bad signature), which a
 * worker with valid credentials does not send.
 *
 * <p>The HTTP stack is {@code storage.http-client}. The event loops of the AWS Common Runtime's ({@code crt}, the
 * default) took about half the CPU of Netty's for the same storage operations (three per request; docs/benchmarks.md).
 * Its event loops are native threads; the futures they complete go on on the completion pool, whose threads carry the
 * application's class loader whichever thread made them ({@link WorkerThreads} makes the pool, and stops it once the
 * client is closed). Each response stream's flow-control window is bounded ({@link #READ_WINDOW_BYTES}; the runtime's
 * default is 16 MiB a stream), so what the native side holds of a body the worker has not yet taken stays small. With
 * {@code netty}, its event loops are the worker's own (made by {@link WorkerThreads} too), shut down without the quiet
 * period of 2 s the SDK waits when it closes the loops it made itself: by then every request has ended, and the 2 s
 * were added to every stop of the worker.
 */
@ApplicationScoped
public class S3ClientProducer {

    /** The most bytes of one response the native side buffers before the worker takes them. */
    static final long READ_WINDOW_BYTES = 1024 * 1024;

    private final StorageSettings config;
    private final WorkerThreads threads;
    private final ExecutorService completions;
    /** Netty's event loops, made only when {@code netty} is the HTTP stack. */
    private final Optional<SdkEventLoopGroup> eventLoops;
    /** Whether this producer holds a reference that keeps the AWS Common Runtime up ({@link #holdRuntime}). */
    private boolean holdsRuntime;

    S3ClientProducer(StorageSettings config, WorkerThreads threads) {
        this.config = config;
        this.threads = threads;
        this.eventLoops = this.config.httpClient() == StorageSettings.HttpClient.NETTY
                ? Optional.of(threads.s3EventLoops())
                : Optional.empty();
        this.completions =
                threads.s3Completions(Math.max(2, Runtime.getRuntime().availableProcessors()));
    }

    @Produces
    @ApplicationScoped
    S3AsyncClient s3() {
        var builder = S3AsyncClient.builder()
                .httpClientBuilder(httpClient())
                .asyncConfiguration(async ->
                        async.advancedOption(SdkAdvancedAsyncClientOption.FUTURE_COMPLETION_EXECUTOR, completions))
                .serviceConfiguration(
                        S3Configuration.builder().expectContinueEnabled(false).build())
                .credentialsProvider(credentials())
                .region(region())
                // Checksums only where S3 requires them: since SDK 2.30 every upload carries a trailing checksum by
                // default, which S3-compatible stores (S3Proxy, older MinIO) refuse. Each image's sha256 is kept as
                // object metadata and in the event instead.
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        config.endpoint().ifPresent(endpoint -> builder.endpointOverride(URI.create(endpoint))
                .forcePathStyle(true));
        return builder.build();
    }

    private SdkAsyncHttpClient.Builder<?> httpClient() {
        return eventLoops
                .<SdkAsyncHttpClient.Builder<?>>map(loops ->
                        NettyNioAsyncHttpClient.builder().eventLoopGroup(loops).maxConcurrency(config.maxConnections()))
                .orElseGet(() -> {
                    holdRuntime();
                    return AwsCrtAsyncHttpClient.builder()
                            .maxConcurrency(config.maxConnections())
                            .readBufferSizeInBytes(READ_WINDOW_BYTES);
                });
    }

    /**
     * Keeps the AWS Common Runtime up until the client is closed. The runtime tears its native event loops down from
     * a JVM shutdown hook of its own, which runs beside Quarkus's: at a SIGTERM the storage operations of the
     * requests still draining then never completed, the drain's grace ran out and their calls were made again by
     * the next worker. The hook only releases one reference; this one is released in {@link #close(S3AsyncClient)},
     * after the drain.
     */
    private void holdRuntime() {
        synchronized (this) {
            if (!holdsRuntime) {
                CRT.acquireShutdownRef();
                holdsRuntime = true;
            }
        }
    }

    @Produces
    @ApplicationScoped
    S3Presigner presigner() {
        var builder = S3Presigner.builder().credentialsProvider(credentials()).region(region());
        config.endpoint().ifPresent(endpoint -> builder.endpointOverride(URI.create(endpoint))
                .serviceConfiguration(
                        S3Configuration.builder().pathStyleAccessEnabled(true).build()));
        return builder.build();
    }

    void close(@Disposes S3AsyncClient client) {
        client.close();
        synchronized (this) {
            if (holdsRuntime) {
                holdsRuntime = false;
                CRT.releaseShutdownRef();
            }
        }
        // A loop group passed in is left open by the client, and the completion pool: both stop once it is closed.
        eventLoops.ifPresent(threads::stop);
        threads.stop(completions);
    }

    void close(@Disposes S3Presigner presigner) {
        presigner.close();
    }

    private AwsCredentialsProvider credentials() {
        if (config.accessKeyId().isPresent() && config.secretAccessKey().isPresent()) {
            return StaticCredentialsProvider.create(AwsBasicCredentials.create(
                    config.accessKeyId().get(), config.secretAccessKey().get()));
        }
        return DefaultCredentialsProvider.builder().build();
    }

    private Region region() {
        if (config.region().isPresent()) {
            return Region.of(config.region().get());
        }
        try {
            return new DefaultAwsRegionProviderChain().getRegion();
        } catch (RuntimeException noRegion) {
            // An S3-compatible store ignores the region, but the SDK signs with one.
            return Region.US_EAST_1;
        }
    }
}
