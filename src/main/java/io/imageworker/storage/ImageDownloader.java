package io.imageworker.storage;

import io.imageworker.config.WorkerConfig;
import io.imageworker.support.BoundedBody;
import io.smallrye.mutiny.Uni;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.ext.web.client.WebClient;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.function.LongConsumer;

/**
 * Downloads an image the gateway returned as a temporary {@code url}, at once (the gateway contract, Answers), with the download
 * timeout and the size cap enforced while reading. The URL itself is never passed on.
 */
@ApplicationScoped
public class ImageDownloader {

    private final WebClient client;
    private final WorkerConfig.Download config;

    ImageDownloader(Vertx vertx, WorkerConfig config) {
        this.config = config.download();
        this.client = WebClient.create(
                vertx,
                new WebClientOptions()
                        .setFollowRedirects(true)
                        .setMaxRedirects(3)
                        .setKeepAlive(true)
                        .setMaxPoolSize(Math.max(1, config.concurrency()))
                        .setConnectTimeout((int) Math.min(
                                Integer.MAX_VALUE, this.config.timeout().toMillis()))
                        .setUserAgent("image-worker"));
        BoundedBody.install(client);
    }

    /**
     * The bytes at {@code url}, or a {@link DownloadException} that says why not; {@code holding} is told how many bytes
     * the body holds as soon as that is known ({@link BoundedBody}).
     */
    public Uni<byte[]> download(String url, LongConsumer holding) {
        return Uni.createFrom()
                .deferred(() -> client.getAbs(url)
                        .idleTimeout(config.timeout().toMillis())
                        .as(new BoundedBody(config.maxBytes(), holding).codec())
                        .send())
                .ifNoItem()
                .after(config.timeout())
                .failWith(() -> new DownloadException(true, "the image download did not finish in time"))
                .onFailure(error -> !(error instanceof DownloadException))
                .transform(ImageDownloader::describe)
                .map(response -> {
                    if (response.statusCode() != 200) {
                        // 403/404 is an expired temporary URL; other statuses may pass.
                        boolean transientStatus = response.statusCode() >= 500 || response.statusCode() == 429;
                        throw new DownloadException(
                                false,
                                transientStatus,
                                "the image download answered " + response.statusCode()
                                        + (response.statusCode() == 403 || response.statusCode() == 404
                                                ? " (the temporary URL has expired or is wrong)"
                                                : ""));
                    }
                    byte[] body = response.body();
                    return body == null ? new byte[0] : body;
                });
    }

    private static Throwable describe(Throwable error) {
        if (error instanceof BoundedBody.BodyTooLargeException) {
            return new DownloadException(false, false, "the downloaded image is " + error.getMessage());
        }
        if (error instanceof java.util.concurrent.TimeoutException) {
            return new DownloadException(true, "the image download did not finish in time");
        }
        return new DownloadException(false, true, "the image download failed: " + error.getMessage());
    }

    @PreDestroy
    void close() {
        client.close();
    }

    /** Why a download gave no image. */
    public static final class DownloadException extends RuntimeException {
        private final boolean timedOut;
        private final boolean transientFailure;

        DownloadException(boolean timedOut, String message) {
            this(timedOut, true, message);
        }

        DownloadException(boolean timedOut, boolean transientFailure, String message) {
            super(message, null, false, false);
            this.timedOut = timedOut;
            this.transientFailure = transientFailure;
        }

        /** The download ran out of time. */
        public boolean timedOut() {
            return timedOut;
        }

        /** Trying the same download again may succeed. */
        public boolean transientFailure() {
            return transientFailure;
        }
    }
}
