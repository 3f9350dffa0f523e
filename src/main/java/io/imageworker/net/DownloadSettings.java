package io.imageworker.net;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * Downloads of the gateway's returned image URLs and of {@code https://} references ({@code
 * image-worker.download.*}, {@code IMAGE_WORKER_DOWNLOAD_*}): how long one may take and how large it may be. Read by
 * the gateway's {@code ImageDownloader} and the references' {@code HttpsReferenceFetcher}, both through {@link
 * GuardedFetcher}.
 */
@ConfigMapping(prefix = "image-worker.download")
public interface DownloadSettings {
    /**
     * The largest image the worker reads, 25 MiB, the gateway's per-file limit (gateway contract §4): the default of
     * {@link #maxBytes()}, and the cap of an edit's reference whatever that setting says.
     */
    int MAX_IMAGE_BYTES = 25 * 1024 * 1024;

    /** Time allowed for one download, headers and body. */
    @WithDefault("60s")
    Duration timeout();

    /** Largest downloaded image, in bytes; a larger body is cut off while reading. */
    @WithDefault("" + MAX_IMAGE_BYTES)
    int maxBytes();
}
