package io.imageworker.api;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.util.Optional;

/**
 * The status endpoint, {@code GET /requests/{requestId}} ({@code image-worker.status.*}, {@code
 * IMAGE_WORKER_STATUS_*}): what it answers with, how many lookups it makes at once, and how a producer proves who it
 * is. Read by {@link RequestStatusResource}, {@link StatusLookups}, {@link StatusCallers}, and the console, which
 * admits producers by the same credentials.
 */
@ConfigMapping(prefix = "image-worker.status")
public interface StatusSettings {
    /**
     * Give the presigned GET URL of a completed request's image in its status ({@code
     * IMAGE_WORKER_STATUS_PRESIGNED_URLS}). Off by default: whoever reaches the endpoint and knows (or guesses) an
     * id would get a URL that reads the image; the {@code s3://} address is given either way.
     */
    @WithDefault("false")
    boolean presignedUrls();

    /**
     * Most status queries reading the result store at once ({@code IMAGE_WORKER_STATUS_MAX_LOOKUPS}); one beyond
     * them is answered 429 with {@code Retry-After}, so that a flood of queries never takes the store client's
     * connections and the store's request rate from the pipeline's own ledger lookups.
     */
    @WithDefault("4")
    int maxLookups();

    /**
     * With {@link io.imageworker.config.WorkerConfig#producerIdentity()} {@code topic}: each producer's bearer token for its status
     * queries ({@code IMAGE_WORKER_STATUS_TOKENS}, {@code name=token,...}, from a Secret; {@link io.imageworker.config.StatusTokens}). A
     * query with a producer's token sees that producer's requests only, with its own bound of lookups. Ignored
     * with {@code declared}.
     */
    Optional<String> tokens();

    /**
     * With {@link io.imageworker.config.WorkerConfig#producerIdentity()} {@code topic}: the request header that names the caller's
     * producer when an ingress in front of the endpoint authenticates producers itself (mTLS) and sets it ({@code
     * IMAGE_WORKER_STATUS_PRODUCER_HEADER}, such as {@code X-Producer}); whoever reaches the port directly can set
     * it too, so only where nothing but that ingress can. Empty (the default): tokens only.
     */
    Optional<String> producerHeader();
}
