package io.imageworker.reference;

import io.imageworker.config.ReferencePrefixes;
import io.imageworker.config.WorkerConfig;
import io.imageworker.storage.StorageSettings;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Which objects an {@code s3://} reference of a producer may read (issue 49), decided from the settings alone, before
 * any read of the store:
 *
 * <ul>
 *   <li>the bucket is one of {@code IMAGE_WORKER_REFERENCE_ALLOWED_BUCKETS} (by default the storage bucket), always;
 *   <li>with {@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}: the key is under one of {@code
 *       IMAGE_WORKER_REFERENCE_PREFIXES} (shared places, none by default), or is one of the producer's own outputs,
 *       {@code <prefix><producer>/...} in the storage bucket for the default key prefix and each of {@code
 *       IMAGE_WORKER_STORAGE_ALLOWED_KEY_PREFIXES}. So the worker's output of another producer is never read for it
 *       (the start-up check refuses a shared prefix that overlaps the output or result prefixes in that mode);
 *   <li>with {@code declared} (the default): any key of an allowed bucket, as before, unless {@code
 *       IMAGE_WORKER_REFERENCE_PREFIXES} is set, and then only keys under it (producers are not authenticated in that
 *       mode, so there is no "own" output to add).
 * </ul>
 */
final class ReadableObjects {

    private final Set<String> allowedBuckets;
    private final Optional<ReferencePrefixes> shared;
    private final boolean perProducer;
    private final String outputBucket;
    private final List<String> outputPrefixes;

    ReadableObjects(WorkerConfig config, ReferenceSettings reference, StorageSettings storage) {
        this(
                reference.allowedBuckets().orElse(Set.of(storage.bucket())),
                ReferencePrefixes.of(reference.prefixes()),
                config.producerIdentity() == WorkerConfig.ProducerIdentity.topic,
                storage.bucket(),
                outputPrefixes(storage));
    }

    ReadableObjects(
            Set<String> allowedBuckets,
            Optional<ReferencePrefixes> shared,
            boolean perProducer,
            String outputBucket,
            List<String> outputPrefixes) {
        this.allowedBuckets = Set.copyOf(allowedBuckets);
        this.shared = shared;
        this.perProducer = perProducer;
        this.outputBucket = outputBucket;
        this.outputPrefixes = List.copyOf(outputPrefixes);
    }

    /** The key prefixes images are stored under: the default one and each allowed one. */
    static List<String> outputPrefixes(StorageSettings storage) {
        Set<String> prefixes = new LinkedHashSet<>();
        prefixes.add(storage.keyPrefix());
        prefixes.addAll(storage.allowedKeyPrefixes().orElse(List.of()));
        return new ArrayList<>(prefixes);
    }

    /** Whether the bucket may be named at all ({@code IMAGE_WORKER_REFERENCE_ALLOWED_BUCKETS}). */
    boolean bucketAllowed(String bucket) {
        return allowedBuckets.contains(bucket);
    }

    /**
     * Whether a request of {@code producer} (its authenticated producer in {@code topic} mode) may read the object
     * {@code key} of an allowed {@code bucket}.
     */
    boolean mayRead(String producer, String bucket, String key) {
        if (!bucketAllowed(bucket)) {
            return false;
        }
        if (shared.isPresent() && shared.get().covers(bucket, key)) {
            return true;
        }
        if (!perProducer) {
            return shared.isEmpty();
        }
        if (!outputBucket.equals(bucket) || producer == null) {
            return false;
        }
        for (String prefix : outputPrefixes) {
            if (key.startsWith(prefix + producer + "/")) {
                return true;
            }
        }
        return false;
    }
}
