package io.imageworker.storage;

import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.RequestFailure;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.gateway.ReceivedImage;
import io.imageworker.image.ImageFormat;
import io.imageworker.support.Patience;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;

/**
 * Stores a received image under {@code <keyPrefix><requestId>.<ext>}, or {@code <keyPrefix><requestId>/<i>.<ext>}
 * for variant {@code i} of a request with {@code count} above 1 (contract v1.2), the key built only from the validated
 * request and the image's real format, with the request id and the SHA-256 as object metadata. {@code /} is outside
 * the requestId alphabet, so no two requests under one prefix share a key (the v1.1 variant key
 * {@code <requestId>-<i>} was also request {@code <requestId>-<i>}'s own); results recorded under the old layout keep
 * their keys, since a redelivery replays the recorded event rather than rebuilding it. A store that fails is
 * tried again within the infrastructure patience; then the request (or the variant) ends as {@code STORAGE_ERROR}.
 */
@ApplicationScoped
public class ImageStorage {

    private final ImageStore store;
    private final Patience patience;
    private final WorkerMetrics metrics;
    private final Tracing tracing;

    ImageStorage(ImageStore store, Patience patience, WorkerMetrics metrics, Tracing tracing) {
        this.store = store;
        this.patience = patience;
        this.metrics = metrics;
        this.tracing = tracing;
    }

    /**
     * Stores {@code image} as variant {@code variant} (from 1) of {@code request}; fails with {@link RequestFailure}
     * ({@code STORAGE_ERROR}).
     */
    public Uni<Stored> store(ImageRequest request, int variant, ReceivedImage image) {
        String key = key(request, variant, image.info().format());
        String contentType = image.info().format().mimeType();
        Map<String, String> metadata = Map.of("request-id", request.requestId(), "sha256", image.sha256());
        long started = System.nanoTime();
        return tracing.stage(
                        "store image",
                        () -> patience.retry(store.putImage(key, image.bytes(), contentType, metadata)),
                        (span, ignored) -> {
                            span.setAttribute("image_worker.key", key);
                            span.setAttribute("image_worker.bytes", image.bytes().length);
                        })
                .onFailure()
                .transform(error -> new RequestFailure(
                        ErrorCode.STORAGE_ERROR,
                        "the image could not be stored: " + StorageFailures.describe(error),
                        error))
                .map(ignored -> {
                    metrics.stored(image.bytes().length);
                    String bucket = store.bucket();
                    Log.infof(
                            "[%s] stored s3://%s/%s (%s, %d bytes)",
                            request.requestId(), bucket, key, image.size(), image.bytes().length);
                    return new Stored(
                            new TerminalEvent.StoredImage(
                                    bucket,
                                    key,
                                    "s3://" + bucket + "/" + key,
                                    store.presignedUrl(key),
                                    contentType,
                                    image.size().width(),
                                    image.size().height(),
                                    image.bytes().length,
                                    image.sha256()),
                            (System.nanoTime() - started) / 1_000_000);
                });
    }

    /** The key of variant {@code variant} (from 1) of {@code request} stored as {@code format}. */
    static String key(ImageRequest request, int variant, ImageFormat format) {
        return StorageKeys.imageKey(request.keyPrefix(), request.storageId(), request.count(), variant, format);
    }

    /** Where an image went, and how long storing it took. */
    public record Stored(TerminalEvent.StoredImage image, long storeMs) {}
}
