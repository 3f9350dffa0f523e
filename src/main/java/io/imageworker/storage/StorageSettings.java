package io.imageworker.storage;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Where images and result documents are stored ({@code image-worker.storage.*}, {@code IMAGE_WORKER_STORAGE_*}): the
 * bucket, its prefixes and the S3 client. Read by this package, and by the validation of an output prefix ({@code
 * processing}), the references read from the bucket ({@code reference}) and the console.
 */
@ConfigMapping(prefix = "image-worker.storage")
public interface StorageSettings {
    /** Bucket images are written to. */
    @WithDefault("images")
    String bucket();

    /** Default key prefix of images. */
    @WithDefault("images/")
    String keyPrefix();

    /** Key prefixes a request's {@code output.keyPrefix} may fall under; empty means the default prefix only. */
    Optional<List<String>> allowedKeyPrefixes();

    /** Where result documents (the idempotency record of each {@code requestId}) are written. */
    @WithDefault("results/")
    String resultPrefix();

    /** An S3-compatible endpoint; path-style access is used when set. Empty means AWS. */
    Optional<String> endpoint();

    /** Region of the store; empty uses the AWS default chain ({@code AWS_REGION}), or us-east-1 with an endpoint. */
    Optional<String> region();

    /** Access key; empty uses the AWS default credentials chain ({@code AWS_ACCESS_KEY_ID}, roles, ...). */
    Optional<String> accessKeyId();

    /** Secret key, with {@link #accessKeyId()}. */
    Optional<String> secretAccessKey();

    /** Create the bucket at start when it does not exist (local runs and tests). */
    @WithDefault("false")
    boolean createBucket();

    /** Put a presigned GET URL of the image into {@code image-completed}. */
    @WithDefault("false")
    boolean presign();

    /** Lifetime of a presigned URL. */
    @WithDefault("1h")
    Duration presignTtl();

    /** Time allowed for one storage operation. */
    @WithDefault("30s")
    Duration timeout();

    /** Time the readiness check allows the store to answer; keep it below the readiness probe's timeout. */
    @WithDefault("2s")
    Duration pingTimeout();

    /** Most connections to the store at once. */
    @WithDefault("256")
    int maxConnections();

    /**
     * The S3 client's HTTP stack: {@code crt}, the AWS Common Runtime's (native, about half the CPU a storage
     * operation costs on Netty's), or {@code netty}, the SDK's pure-Java one, for a platform the runtime's native
     * library does not support.
     */
    @WithDefault("crt")
    HttpClient httpClient();

    /** The HTTP stacks the S3 client can use. */
    enum HttpClient {
        CRT,
        NETTY
    }
}
