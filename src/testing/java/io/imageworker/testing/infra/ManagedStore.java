package io.imageworker.testing.infra;

import java.net.URI;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.BucketAlreadyExistsException;
import software.amazon.awssdk.services.s3.model.BucketAlreadyOwnedByYouException;

/**
 * An S3-compatible store for tests, whichever way it runs. Clients reach it at
 * {@link #endpoint()} with path-style addressing ({@code http://host:port/bucket/key}), as the worker does.
 */
public interface ManagedStore extends ManagedServer {

    /** The endpoint override for S3 clients, e.g. {@code http://127.0.0.1:41234}. */
    URI endpoint();

    /** The access key id clients sign with. */
    String accessKey();

    /** The secret access key clients sign with. */
    String secretKey();

    /** The region clients sign for. */
    String region();

    /**
     * The directory on this machine that holds the stored objects ({@code <dir>/<bucket>/<key>}), when the store is
     * embedded; empty for a container or an external store.
     */
    default Optional<Path> localDataDir() {
        return Optional.empty();
    }

    /**
     * A new asynchronous client for this store: path-style, its endpoint, credentials and region, over the Netty HTTP
     * client (the one the worker uses), which all these clients share: closing a client of its own costs 2 s of
     * event-loop shutdown. The caller closes the client.
     *
     * <p>Checksums only where an operation requires them: by default the SDK (2.30 and later) sends each upload as
     * {@code aws-chunked} with a trailing CRC32, which S3Proxy 2.6.0 refuses ("The provided 'x-amz-content-sha256'
     * header does not match what was computed", gaul/s3proxy#795). Any client of the embedded store needs the same.
     */
    default S3AsyncClient newAsyncClient() {
        return S3AsyncClient.builder()
                .httpClient(SharedHttpClient.get())
                .endpointOverride(endpoint())
                .forcePathStyle(true)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .region(Region.of(region()))
                .credentialsProvider(
                        StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey(), secretKey())))
                .build();
    }

    /** Creates the bucket unless it exists. */
    default void createBucket(String name) {
        try (S3AsyncClient s3 = newAsyncClient()) {
            s3.createBucket(request -> request.bucket(name)).join();
        } catch (CompletionException e) {
            if (!(e.getCause() instanceof BucketAlreadyOwnedByYouException
                    || e.getCause() instanceof BucketAlreadyExistsException)) {
                throw e;
            }
        }
    }
}
