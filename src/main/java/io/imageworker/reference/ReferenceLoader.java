package io.imageworker.reference;

import io.imageworker.ImageRequest;
import io.imageworker.ImageSource;
import io.imageworker.config.WorkerConfig;
import io.imageworker.image.ImageInfo;
import io.imageworker.image.ImageInspector;
import io.imageworker.storage.ImageStore;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;

/**
 * Reads an edit's references and mask from their sources, in order, and refuses anything the gateway must not be
 * sent (spec 4.3: reject unsupported formats and files over 25 MB locally, a bad request can take 90 s to be
 * refused). Every refusal is a {@link ReferenceRefusedException} naming the reference, before any gateway call.
 */
@ApplicationScoped
public class ReferenceLoader {

    /** The gateway's per-file limit (spec 8.3). */
    public static final long MAX_BYTES = 25L * 1024 * 1024;

    private final ImageStore store;
    private final HttpsReferenceFetcher https;
    private final Set<String> allowedBuckets;

    ReferenceLoader(ImageStore store, HttpsReferenceFetcher https, WorkerConfig config) {
        this.store = store;
        this.https = https;
        this.allowedBuckets = config.reference()
                .allowedBuckets()
                .orElse(Set.of(config.storage().bucket()));
    }

    /** The edit's inputs, or a failure with {@link ReferenceRefusedException}. */
    public Uni<EditInputs> load(ImageRequest request) {
        List<Uni<LoadedImage>> loads = new ArrayList<>();
        for (int i = 0; i < request.references().size(); i++) {
            loads.add(load(request.references().get(i), "references[" + i + "]"));
        }
        Uni<List<LoadedImage>> all = Uni.join().all(loads).andFailFast();
        if (request.mask() == null) {
            return all.map(images -> new EditInputs(images, null));
        }
        return all.onItem()
                .transformToUni(images -> load(request.mask(), "mask").map(mask -> new EditInputs(images, mask)));
    }

    private Uni<LoadedImage> load(ImageSource source, String name) {
        Uni<byte[]> bytes;
        if (source.base64() != null) {
            bytes = Uni.createFrom().item(() -> decode(source.base64(), name));
        } else if (source.uri().startsWith("s3://")) {
            bytes = fromStore(source.uri(), name);
        } else {
            // Every other URI, http:// included, goes to the fetcher, which refuses anything but an allowed https://.
            bytes = https.fetch(source.uri(), name);
        }
        return bytes.map(data -> checked(data, name));
    }

    private Uni<byte[]> fromStore(String uri, String name) {
        String rest = uri.substring("s3://".length());
        int slash = rest.indexOf('/');
        if (slash <= 0 || slash == rest.length() - 1) {
            return Uni.createFrom()
                    .failure(new ReferenceRefusedException(name + ": " + uri + " is not s3://bucket/key"));
        }
        String bucket = rest.substring(0, slash);
        String key = rest.substring(slash + 1);
        if (!allowedBuckets.contains(bucket)) {
            return Uni.createFrom()
                    .failure(new ReferenceRefusedException(
                            name + ": bucket '" + bucket + "' is not in" + " IMAGE_WORKER_REFERENCE_ALLOWED_BUCKETS"));
        }
        // The size is checked before reading, so an oversized object is never loaded into memory.
        return store.sizeOf(bucket, key).onItem().transformToUni(size -> {
            if (size.isEmpty()) {
                return Uni.createFrom().failure(new ReferenceRefusedException(name + ": " + uri + " does not exist"));
            }
            if (size.get() > MAX_BYTES) {
                return Uni.createFrom()
                        .failure(new ReferenceRefusedException(
                                name + ": " + uri + " is " + size.get() + " bytes, over the 25 MB limit"));
            }
            return store.getObject(bucket, key)
                    .map(found -> found.orElseThrow(
                            () -> new ReferenceRefusedException(name + ": " + uri + " does not exist")));
        });
    }

    private static byte[] decode(String base64, String name) {
        // Four base64 characters carry three bytes: refuse before decoding what would exceed the cap.
        if ((long) base64.length() / 4 * 3 > MAX_BYTES + 3) {
            throw new ReferenceRefusedException(name + ": inline image is over the 25 MB limit");
        }
        try {
            return Base64.getDecoder().decode(base64.replaceAll("\\s", ""));
        } catch (IllegalArgumentException e) {
            throw new ReferenceRefusedException(name + ": base64 is not valid");
        }
    }

    private static LoadedImage checked(byte[] data, String name) {
        if (data.length > MAX_BYTES) {
            throw new ReferenceRefusedException(name + ": image is over the 25 MB limit");
        }
        ImageInfo info = ImageInspector.inspect(data);
        if (!info.isUsable()) {
            throw new ReferenceRefusedException(name + ": " + info.refusal().orElse("not a png, jpeg or webp image"));
        }
        return new LoadedImage(data, info);
    }
}
