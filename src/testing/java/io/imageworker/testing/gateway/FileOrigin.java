package io.imageworker.testing.gateway;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The second origin: serves the images returned as {@code data[0].url} at {@code /files/<id>.png} until they expire,
 * like a CDN or object store in front of the real gateway.
 */
final class FileOrigin implements Handler<HttpServerRequest> {

    /** How a stored file answers. */
    enum Mode {
        SERVE,
        EXPIRED,
        HANG
    }

    private record StoredFile(byte[] bytes, String contentType, Instant expiresAt, Mode mode, int expiredStatus) {}

    private final Map<String, StoredFile> files = new ConcurrentHashMap<>();
    private final Set<HttpServerRequest> hanging = ConcurrentHashMap.newKeySet();
    private final List<RecordedDownload> downloads = new ArrayList<>();
    private volatile String baseUrl;

    void baseUrl(String value) {
        baseUrl = value;
    }

    String baseUrl() {
        return baseUrl;
    }

    /** Stores the bytes and returns their URL. */
    String put(byte[] bytes, String contentType, Duration lifetime, Mode mode, int expiredStatus) {
        String id = UUID.randomUUID().toString().replace("-", "");
        files.put(id, new StoredFile(bytes, contentType, Instant.now().plus(lifetime), mode, expiredStatus));
        return baseUrl + "/files/" + id + ".png";
    }

    @Override
    public void handle(HttpServerRequest req) {
        req.exceptionHandler(e -> {});
        String path = req.path();
        StoredFile file = null;
        if (path.startsWith("/files/") && path.endsWith(".png")) {
            file = files.get(path.substring("/files/".length(), path.length() - ".png".length()));
        }
        if (file != null && file.mode == Mode.HANG) {
            record(path, 0);
            hanging.add(req);
            req.response().closeHandler(v -> hanging.remove(req));
            return;
        }
        if (file != null && file.mode == Mode.SERVE && Instant.now().isBefore(file.expiresAt)) {
            record(path, 200);
            req.response()
                    .putHeader("Content-Type", file.contentType)
                    .putHeader("Cache-Control", "private, max-age=3600")
                    .end(Buffer.buffer(file.bytes));
            return;
        }
        int status = file != null && file.mode == Mode.EXPIRED ? file.expiredStatus : 404;
        record(path, status);
        if (status == 403) {
            req.response()
                    .setStatusCode(403)
                    .putHeader("Content-Type", "application/xml")
                    .end("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code>"
                            + "<Message>Request has expired</Message></Error>");
        } else {
            req.response()
                    .setStatusCode(status)
                    .putHeader("Content-Type", "text/plain; charset=utf-8")
                    .end("404 page not found");
        }
    }

    /** Drops files past their lifetime, to bound memory in long runs. */
    void sweep() {
        Instant now = Instant.now();
        files.values().removeIf(f -> f.mode == Mode.SERVE && now.isAfter(f.expiresAt));
    }

    List<RecordedDownload> downloads() {
        synchronized (downloads) {
            return List.copyOf(downloads);
        }
    }

    /** Forgets files and downloads, and closes downloads left hanging. */
    void reset() {
        for (HttpServerRequest req : List.copyOf(hanging)) {
            req.connection().close();
        }
        hanging.clear();
        files.clear();
        synchronized (downloads) {
            downloads.clear();
        }
    }

    private void record(String path, int status) {
        synchronized (downloads) {
            downloads.add(new RecordedDownload(path, status, Instant.now()));
        }
    }
}
