package io.imageworker.reference;

import io.smallrye.config.ConfigMapping;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Which sources an edit's references and mask may come from ({@code image-worker.reference.*}, {@code
 * IMAGE_WORKER_REFERENCE_*}): the buckets, key prefixes and hosts. Read by {@link ReadableObjects}, {@link
 * HttpsReferenceFetcher} and the start-up check.
 */
@ConfigMapping(prefix = "image-worker.reference")
public interface ReferenceSettings {
    /** Buckets an {@code s3://} reference may name; empty means the storage bucket. */
    Optional<Set<String>> allowedBuckets();

    /** Hosts an {@code https://} reference may name; empty allows none. */
    Optional<Set<String>> allowedHosts();

    /**
     * Where an {@code s3://} reference may be read from, within {@link #allowedBuckets()} ({@code
     * IMAGE_WORKER_REFERENCE_PREFIXES}, issue 49): {@code s3://<bucket>/<key prefix>/,...} ({@link
     * io.imageworker.config.ReferencePrefixes}). With {@link io.imageworker.config.WorkerConfig#producerIdentity()} {@code topic}, these shared places and the
     * producer's own output ({@code <key prefix><producer>/}) only, never another producer's, empty: its own
     * output only. With {@code declared}: empty reads any key of the allowed buckets, as before; set, only these.
     */
    Optional<List<String>> prefixes();
}
