package io.imageworker.storage;

import io.imageworker.contract.RequestId;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * Object storage of images and of result documents, through the asynchronous S3 client. Every operation is lazy
 * (nothing happens until subscribed, so a retry repeats the call) and bounded by the storage timeout.
 *
 * <p>The keys the worker writes and looks up are built from validated parts only ({@link StorageKeys}): a {@code
 * requestId} that breaks the contract's rule ({@link RequestId}), or a key that breaks {@link
 * ObjectAddress#keyRefusal} (an image's, a result document's or a variant record's alike), fails a write with an
 * {@link IllegalArgumentException} before anything is sent, whoever the caller is; a lookup under such a key finds
 * nothing, since nothing can have been written there.
 */
@ApplicationScoped
public class ImageStore {

    private final S3AsyncClient s3;
    private final S3Presigner presigner;
    private final StorageSettings config;

    ImageStore(S3AsyncClient s3, S3Presigner presigner, StorageSettings config) {
        this.s3 = s3;
        this.presigner = presigner;
        this.config = config;
    }

    /** The bucket images are written to. */
    public String bucket() {
        return config.bucket();
    }

    /** Writes an image with its real content type and the given user metadata. */
    public Uni<Void> putImage(String key, byte[] bytes, String contentType, Map<String, String> metadata) {
        Optional<String> refusal = ObjectAddress.keyRefusal(key);
        if (refusal.isPresent()) {
            return Uni.createFrom().failure(new IllegalArgumentException("an image key " + refusal.get()));
        }
        return call(() -> s3.putObject(
                        put -> put.bucket(config.bucket())
                                .key(key)
                                .contentType(contentType)
                                .contentLength((long) bytes.length)
                                .metadata(metadata),
                        // Not copied: the array is the caller's and no one writes to it.
                        AsyncRequestBody.fromBytesUnsafe(bytes)))
                .replaceWithVoid();
    }

    /** Writes the result document of a request: the terminal event it ended with. */
    public Uni<Void> putResult(String requestId, byte[] json) {
        if (!StorageKeys.isStoredName(requestId)) {
            return invalidRequestId();
        }
        return putJson(resultKey(requestId), json);
    }

    private Uni<Void> putJson(String key, byte[] json) {
        Optional<String> refusal = ObjectAddress.keyRefusal(key);
        if (refusal.isPresent()) {
            return Uni.createFrom().failure(new IllegalArgumentException("a record's key " + refusal.get()));
        }
        return call(() -> s3.putObject(
                        put -> put.bucket(config.bucket())
                                .key(key)
                                .contentType("application/json")
                                .contentLength((long) json.length),
                        AsyncRequestBody.fromBytesUnsafe(json)))
                .replaceWithVoid();
    }

    /** The result document of a request, if its outcome is already recorded. */
    public Uni<Optional<byte[]>> findResult(String requestId) {
        if (!StorageKeys.isStoredName(requestId)) {
            return invalidRequestId();
        }
        String key = resultKey(requestId);
        if (ObjectAddress.keyRefusal(key).isPresent()) {
            // Nothing is ever written under a key the store must not be sent (putResult refuses it): no record. The
            // request is then refused by its validation (StorageKeys.refusal), before any call.
            return Uni.createFrom().item(Optional.empty());
        }
        // Nearly every request has no record yet: a HEAD answers that without an error body for either side to write
        // and parse; the rare record is then read.
        return sizeOf(config.bucket(), key)
                .chain(size -> size.isPresent()
                        ? getObject(config.bucket(), key)
                        : Uni.createFrom().item(Optional.<byte[]>empty()));
    }

    /**
     * Writes the record of one variant of a request ({@code <result-prefix><requestId>/<variant>.json}): a key no
     * terminal record can have, since a {@code requestId} holds no {@code /} (nor a producer, in a name {@code
     * <producer>/<requestId>}: {@link StorageKeys#isStoredName}).
     */
    public Uni<Void> putVariant(String requestId, int variant, byte[] json) {
        if (!StorageKeys.isStoredName(requestId)) {
            return invalidRequestId();
        }
        return putJson(variantRecordKey(config.resultPrefix(), requestId, variant), json);
    }

    /**
     * The records of a request's variants, by key: one listing (nearly every request has none yet), then each record
     * found is read. A request has at most {@code ImageRequest.MAX_COUNT} of them, so one page of the listing holds
     * them all.
     */
    public Uni<List<byte[]>> findVariants(String requestId) {
        if (!StorageKeys.isStoredName(requestId)) {
            return invalidRequestId();
        }
        String prefix = variantsPrefix(requestId);
        if (ObjectAddress.keyRefusal(prefix + "1.json").isPresent()) {
            // No variant record is ever written there (putVariant refuses its keys).
            return Uni.createFrom().item(List.of());
        }
        return call(() -> s3.listObjectsV2(list -> list.bucket(config.bucket()).prefix(prefix)))
                .chain(listing -> {
                    List<Uni<Optional<byte[]>>> reads = listing.contents().stream()
                            .filter(object -> object.key().endsWith(".json"))
                            .map(object -> getObject(config.bucket(), object.key()))
                            .toList();
                    if (reads.isEmpty()) {
                        return Uni.createFrom().item(List.<byte[]>of());
                    }
                    return Uni.join().all(reads).andFailFast().map(found -> found.stream()
                            .flatMap(Optional::stream)
                            .toList());
                });
    }

    private static <T> Uni<T> invalidRequestId() {
        return Uni.createFrom()
                .failure(new IllegalArgumentException(
                        "a requestId that is not " + RequestId.RULE + " is never part of a storage key"));
    }

    /** An object's bytes, or empty when there is no such object. */
    public Uni<Optional<byte[]>> getObject(String bucket, String key) {
        return call(() -> s3.getObject(get -> get.bucket(bucket).key(key), AsyncResponseTransformer.toBytes()))
                .map(response -> Optional.of(response.asByteArray()))
                .onFailure(ImageStore::isNotFound)
                .recoverWithItem(Optional.empty());
    }

    /**
     * At most the first {@code maxBytes + 1} bytes of an object, read with a ranged GET, or empty when there is no such
     * object. More than {@code maxBytes} bytes in the answer means the object is larger than {@code maxBytes}: memory
     * never holds more than that, whatever the object's size.
     */
    public Uni<Optional<byte[]>> readAtMost(String bucket, String key, long maxBytes) {
        return call(() -> s3.getObject(
                        get -> get.bucket(bucket).key(key).range("bytes=0-" + maxBytes),
                        AsyncResponseTransformer.toBytes()))
                .map(response -> Optional.of(response.asByteArray()))
                .onFailure(ImageStore::isNotFound)
                .recoverWithItem(Optional.empty());
    }

    /**
     * An object to stream: its content type and length, then its bytes as the store sends them, on the S3 client's
     * threads and at the pace its subscriber asks, never held whole (the console answers an image with it); empty when
     * there is no such object. Bounded by the storage timeout until the answer's headers.
     */
    public Uni<Optional<ObjectStream>> stream(String bucket, String key) {
        return call(() -> s3.getObject(get -> get.bucket(bucket).key(key), AsyncResponseTransformer.toPublisher()))
                .map(answer -> Optional.of(new ObjectStream(
                        answer.response().contentType(), answer.response().contentLength(), answer)))
                .onFailure(ImageStore::isNotFound)
                .recoverWithItem(Optional.empty());
    }

    /** An object's content type and length (either may be null), and its bytes, as the store sends them. */
    public record ObjectStream(String contentType, Long length, Publisher<ByteBuffer> body) {}

    /** The size of an object, or empty when there is no such object; used to refuse large ones before reading. */
    public Uni<Optional<Long>> sizeOf(String bucket, String key) {
        return call(() -> s3.headObject(head -> head.bucket(bucket).key(key)))
                .map(head -> Optional.of(head.contentLength()))
                .onFailure(ImageStore::isNotFound)
                .recoverWithItem(Optional.empty());
    }

    /** A presigned GET URL of an image, or null when presigning is off. */
    public String presignedUrl(String key) {
        if (!config.presign()) {
            return null;
        }
        return presigner
                .presignGetObject(presign -> presign.signatureDuration(config.presignTtl())
                        .getObjectRequest(get -> get.bucket(config.bucket()).key(key)))
                .url()
                .toString();
    }

    /**
     * Makes the S3 client and reaches the bucket in the background ({@link #ping}), so that the first request after a
     * start does not wait for them: the client is made when first used, and a replica started by a scale-out meets
     * its backlog at once. A failure is logged and nothing more: the first request meets it again and answers it as
     * a storage failure, and readiness says so.
     */
    public void warmUp() {
        ping().runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .subscribe()
                .with(
                        reached -> Log.debugf("Bucket %s reached at start", config.bucket()),
                        error -> Log.warnf(
                                "Bucket %s could not be reached at start (%s); each request tries again",
                                config.bucket(), StorageFailures.describe(error)));
    }

    /** Succeeds when the bucket can be reached within {@code storage.ping-timeout}; for readiness. */
    public Uni<Void> ping() {
        return Uni.createFrom()
                .completionStage(() -> s3.headBucket(head -> head.bucket(config.bucket())))
                .ifNoItem()
                .after(config.pingTimeout())
                .fail()
                .replaceWithVoid();
    }

    /** Creates the bucket when it is missing and the configuration asks for it (local runs and tests). */
    public Uni<Void> ensureBucket() {
        if (!config.createBucket()) {
            return Uni.createFrom().voidItem();
        }
        return call(() -> s3.headBucket(head -> head.bucket(config.bucket())))
                .replaceWithVoid()
                .onFailure(error -> error instanceof NoSuchBucketException
                        || error instanceof S3Exception s3Error && s3Error.statusCode() == 404)
                .recoverWithUni(() -> {
                    Log.infof("Creating bucket %s", config.bucket());
                    return call(() -> s3.createBucket(create -> create.bucket(config.bucket())))
                            .replaceWithVoid();
                });
    }

    private static boolean isNotFound(Throwable error) {
        return error instanceof NoSuchKeyException
                || error instanceof S3Exception s3Error
                        && s3Error.statusCode() == 404
                        && !(error instanceof NoSuchBucketException);
    }

    private String resultKey(String requestId) {
        return resultKey(config.resultPrefix(), requestId);
    }

    private String variantsPrefix(String requestId) {
        return variantsPrefix(config.resultPrefix(), requestId);
    }

    /** The key of a request's result document under {@code resultPrefix}. */
    static String resultKey(String resultPrefix, String requestId) {
        return StorageKeys.resultKey(resultPrefix, requestId);
    }

    /** Where the records of a request's variants live: a folder no other request's records can be in. */
    static String variantsPrefix(String resultPrefix, String requestId) {
        return StorageKeys.variantsPrefix(resultPrefix, requestId);
    }

    /** The key of the record of variant {@code variant} of a request. */
    static String variantRecordKey(String resultPrefix, String requestId, int variant) {
        return StorageKeys.variantRecordKey(resultPrefix, requestId, variant);
    }

    private <T> Uni<T> call(Supplier<CompletableFuture<T>> operation) {
        return Uni.createFrom()
                .completionStage(operation)
                .ifNoItem()
                .after(config.timeout())
                .fail()
                .onFailure(java.util.concurrent.CompletionException.class)
                .transform(Throwable::getCause);
    }
}
