package io.imageworker.reference;

import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.ImageSource;
import io.imageworker.image.ImageInfo;
import io.imageworker.image.ImageInspector;
import io.imageworker.net.DownloadSettings;
import io.imageworker.storage.ImageStore;
import io.imageworker.storage.ObjectAddress;
import io.imageworker.storage.StorageSettings;
import io.imageworker.support.Base64Text;
import io.imageworker.support.CpuWork;
import io.imageworker.support.Patience;
import io.imageworker.support.Tracing;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import software.amazon.awssdk.core.exception.SdkServiceException;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;

/**
 * Reads an edit's references and mask from their sources, in order, and refuses anything the gateway must not be
 * sent (gateway contract §4: reject unsupported formats and files over 25 MB locally, a bad request can take 90 s to be
 * refused). Every refusal is a {@link ReferenceRefusedException} naming the reference, before any gateway call.
 *
 * <h2>One source at a time</h2>
 *
 * The sources are read one after the other, in the request's order, not all at once: at most one read is in flight,
 * the first refused source (by position, not by speed) is the one the refusal names, and nothing after it is read.
 * What stays in memory is the images already accepted, each at most {@link #MAX_BYTES}, since the multipart call
 * needs all of them; a source larger than that is never held whole: an {@code s3://} object is refused from its size
 * (a HEAD) and then read with a range of at most {@link #MAX_BYTES} + 1 bytes, an {@code https://} body is cut off
 * at the cap by {@link HttpsReferenceFetcher}, inline base64 is refused from its length before decoding. Reading
 * them concurrently would save the round trips of small images but let up to 16 downloads fill memory at once for a
 * request that may be refused by its first reference.
 *
 * <h2>Refused, or the store failed</h2>
 *
 * An {@code s3://} reference that does not exist, that the store refuses to give (403 and other 4xx), or that the
 * request may not read ({@link ReadableObjects}: {@code IMAGE_WORKER_REFERENCE_PREFIXES}, and in {@code topic} mode
 * another producer's output) is refused with one message for all three ({@link #UNREADABLE}), the last with no read
 * of the store, so that a refusal tells nobody whether someone else's key exists or how large it is.
 * A store that cannot be reached, times out or answers 5xx is an infrastructure failure: the read is retried within
 * {@code IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE}, then fails with {@link ReferenceStoreException}, never as a
 * refused reference.
 *
 * <h2>Formats</h2>
 *
 * The real format is read from the bytes: png, jpeg and webp are accepted, whatever a key, URL or declared type says;
 * anything else is refused. An image of a supported format whose size cannot be read is accepted (the event contract:
 * the size of an {@code auto} edit is then {@code 1024x1024}).
 */
@ApplicationScoped
public class ReferenceLoader {

    /** The gateway's per-file limit (gateway contract §4), {@link DownloadSettings#MAX_IMAGE_BYTES}. */
    public static final long MAX_BYTES = DownloadSettings.MAX_IMAGE_BYTES;

    /**
     * What the refusal of an {@code s3://} object that cannot be read says after its address, whether it is missing,
     * refused by the store, or outside what the request may read.
     */
    public static final String UNREADABLE = "does not exist or may not be read by this request";

    private final ImageStore store;
    private final HttpsReferenceFetcher https;
    private final ReadableObjects readable;
    private final Patience patience;
    private final CpuWork cpu;
    private final Tracing tracing;

    ReferenceLoader(
            ImageStore store,
            HttpsReferenceFetcher https,
            WorkerConfig config,
            ReferenceSettings reference,
            StorageSettings storage,
            Patience patience,
            CpuWork cpu,
            Tracing tracing) {
        this.store = store;
        this.https = https;
        this.readable = new ReadableObjects(config, reference, storage);
        this.patience = patience;
        this.cpu = cpu;
        this.tracing = tracing;
    }

    /**
     * The most bytes {@link #load} can hold for {@code request}: an inline image's decoded length, and the cap for each
     * image still to read; for the memory budget's reservation before the first is read.
     */
    public static long mostBytes(ImageRequest request) {
        List<ImageSource> sources = new ArrayList<>(request.references());
        if (request.mask() != null) {
            sources.add(request.mask());
        }
        long most = 0;
        for (ImageSource source : sources) {
            most += source.base64() != null ? source.base64().length() * 3L / 4 : MAX_BYTES;
        }
        return most;
    }

    /**
     * The edit's inputs, read one after the other, or a failure: {@link ReferenceRefusedException} for the first
     * source in the request's order that is refused, {@link ReferenceStoreException} when the store failed.
     */
    public Uni<EditInputs> load(ImageRequest request) {
        List<ImageSource> sources = new ArrayList<>(request.references());
        List<String> names = new ArrayList<>();
        for (int i = 0; i < sources.size(); i++) {
            names.add("references[" + i + "]");
        }
        if (request.mask() != null) {
            sources.add(request.mask());
            names.add("mask");
        }
        int references = request.references().size();
        return Multi.createFrom()
                .range(0, sources.size())
                .onItem()
                .transformToUniAndConcatenate(i ->
                        tracing.stage("reference", () -> load(request, sources.get(i), names.get(i)), (span, image) -> {
                            span.setAttribute("image_worker.reference", names.get(i));
                            span.setAttribute(
                                    "image_worker.format", image.info().format().mimeType());
                            span.setAttribute("image_worker.bytes", image.bytes().length);
                        }))
                .collect()
                .asList()
                .map(images -> new EditInputs(
                        List.copyOf(images.subList(0, references)),
                        request.mask() == null ? null : images.get(references)));
    }

    private Uni<LoadedImage> load(ImageRequest request, ImageSource source, String name) {
        if (source.base64() != null) {
            // Decoding and inspecting megabytes is CPU work: one task on the pool.
            return cpu.run(() -> checked(decode(source.base64(), name), name));
        }
        Uni<byte[]> bytes;
        if (source.uri().startsWith("s3://")) {
            bytes = fromStore(request.producer(), source.uri(), name);
        } else {
            // Every other URI, http:// included, goes to the fetcher, which refuses anything but an allowed https://.
            bytes = https.fetch(source.uri(), name);
        }
        return bytes.chain(data -> cpu.run(() -> checked(data, name)));
    }

    private Uni<byte[]> fromStore(String producer, String uri, String name) {
        ObjectAddress address;
        try {
            // The validator refused a broken address already; parsing again keeps this class safe on its own.
            address = ObjectAddress.parse(uri);
        } catch (IllegalArgumentException e) {
            return Uni.createFrom().failure(new ReferenceRefusedException(name + ": " + uri + " " + e.getMessage()));
        }
        String bucket = address.bucket();
        String key = address.key();
        if (!readable.bucketAllowed(bucket)) {
            return Uni.createFrom()
                    .failure(new ReferenceRefusedException(
                            name + ": bucket '" + bucket + "' is not in" + " IMAGE_WORKER_REFERENCE_ALLOWED_BUCKETS"));
        }
        if (!readable.mayRead(producer, bucket, key)) {
            // Refused from the settings alone, with no read: answered as a missing object, so that the answer tells
            // nothing of whether the key exists, or how large it is.
            Log.debugf("%s: %s is outside the objects a request of %s may read", name, uri, producer);
            return Uni.createFrom().failure(unreadable(uri, name));
        }
        // The size is checked before reading, so an oversized object is never loaded into memory; the read itself
        // is bounded too, in case the object was replaced by a larger one in between.
        return readFromStore(store.sizeOf(bucket, key), uri, name).onItem().transformToUni(size -> {
            if (size.isEmpty()) {
                return Uni.createFrom().failure(unreadable(uri, name));
            }
            if (size.get() > MAX_BYTES) {
                return Uni.createFrom()
                        .failure(new ReferenceRefusedException(name + ": " + uri + " is " + size.get()
                                + " bytes, over the 25 MB limit (" + MAX_BYTES + " bytes); not read"));
            }
            if (size.get() == 0) {
                return Uni.createFrom().failure(new ReferenceRefusedException(name + ": " + uri + " is empty"));
            }
            return readFromStore(store.readAtMost(bucket, key, MAX_BYTES), uri, name)
                    .map(found -> found.orElseThrow(() -> unreadable(uri, name)));
        });
    }

    /** A store read with patience for the store's transient failures, and the rest of its failures classified. */
    private <T> Uni<T> readFromStore(Uni<T> operation, String uri, String name) {
        return patience.retry(operation)
                .onFailure(Patience::isTransient)
                .transform(error -> new ReferenceStoreException(
                        name + ": the store could not be read for " + uri + ": " + briefly(error), error))
                .onFailure(NoSuchBucketException.class)
                .transform(error -> unreadable(uri, name))
                .onFailure(SdkServiceException.class)
                .transform(error -> {
                    Log.debugf("%s: %s: the store answered %d", name, uri, ((SdkServiceException) error).statusCode());
                    return unreadable(uri, name);
                });
    }

    /** The failure's type and the first sentence of its message: the SDK's messages go on with advice. */
    private static String briefly(Throwable error) {
        if (error instanceof SdkServiceException service) {
            return "the store answered " + service.statusCode();
        }
        String message = String.valueOf(error.getMessage());
        int end = message.indexOf(". ");
        return error.getClass().getSimpleName() + ": " + (end < 0 ? message : message.substring(0, end + 1));
    }

    /**
     * The one refusal of an object that does not exist, that the store refuses to give (403 and other 4xx), or that
     * the request may not read ({@link ReadableObjects}): the same code and message for each, so that it tells nobody
     * whether someone else's key exists.
     */
    static ReferenceRefusedException unreadable(String uri, String name) {
        return new ReferenceRefusedException(name + ": " + uri + " " + UNREADABLE);
    }

    private static byte[] decode(String base64, String name) {
        // Four base64 characters carry three bytes: refuse before decoding what would exceed the cap.
        if ((long) base64.length() / 4 * 3 > MAX_BYTES + 3) {
            throw new ReferenceRefusedException(name + ": inline image is over the 25 MB limit");
        }
        try {
            // The MIME decoder skips line breaks and white space without a copy of the text; anything else that is
            // not base64 is refused by the check below.
            if (!isBase64(base64)) {
                throw new ReferenceRefusedException(name + ": base64 is not valid");
            }
            return Base64.getMimeDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            throw new ReferenceRefusedException(name + ": base64 is not valid");
        }
    }

    private static boolean isBase64(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (!Base64Text.allowed(text.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static LoadedImage checked(byte[] data, String name) {
        if (data.length > MAX_BYTES) {
            throw new ReferenceRefusedException(name + ": image is over the 25 MB limit");
        }
        if (data.length == 0) {
            throw new ReferenceRefusedException(name + ": image is empty");
        }
        ImageInfo info = ImageInspector.inspect(data);
        // Only the format decides: a png, jpeg or webp whose size cannot be read is still sent (see the class comment).
        if (!info.format().isSupported()) {
            throw new ReferenceRefusedException(name + ": " + info.refusal().orElse("not a png, jpeg or webp image"));
        }
        return new LoadedImage(data, info);
    }
}
