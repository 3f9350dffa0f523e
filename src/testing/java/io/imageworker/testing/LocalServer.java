package io.imageworker.testing;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.net.SelfSignedCertificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A local HTTP(S) server on one loopback address, counting what the fetcher did to it: connections opened and
 * closed, requests, the SNI name and {@code Host} header it was sent, and the body bytes it wrote before the
 * connection was closed. For the tests of the fetchers of URLs the worker did not choose (references, gateway
 * answers): a count of 0 connections is how a test shows that a refused address was never reached.
 */
public final class LocalServer implements AutoCloseable {

    public final AtomicInteger connections = new AtomicInteger();
    public final AtomicInteger closedConnections = new AtomicInteger();
    public final AtomicInteger requests = new AtomicInteger();
    public final AtomicLong bodyBytesWritten = new AtomicLong();
    public final AtomicBoolean finishedWriting = new AtomicBoolean();
    public final List<String> serverNames = new CopyOnWriteArrayList<>();
    public final List<String> hostHeaders = new CopyOnWriteArrayList<>();

    /** How long {@link #stream} holds still before writing past its hold point. */
    public static final Duration HOLD = Duration.ofSeconds(5);

    private final Vertx vertx;
    private final HttpServer server;
    private final boolean tls;
    private volatile Handler<HttpServerRequest> handler =
            request -> request.response().setStatusCode(404).end();

    private LocalServer(Vertx vertx, HttpServer server, boolean tls) {
        this.vertx = vertx;
        this.server = server;
        this.tls = tls;
    }

    /** An HTTPS server on {@code bindAddress} presenting {@code certificate}, or plain HTTP when it is null. */
    public static LocalServer start(Vertx vertx, String bindAddress, SelfSignedCertificate certificate)
            throws Exception {
        HttpServerOptions options = new HttpServerOptions().setHost(bindAddress).setPort(0);
        if (certificate != null) {
            options.setSsl(true).setSni(true).setKeyCertOptions(certificate.keyCertOptions());
        }
        LocalServer[] self = new LocalServer[1];
        HttpServer server = vertx.createHttpServer(options)
                .connectionHandler(connection -> {
                    self[0].connections.incrementAndGet();
                    connection.closeHandler(closed -> self[0].closedConnections.incrementAndGet());
                })
                .requestHandler(request -> {
                    self[0].requests.incrementAndGet();
                    self[0].hostHeaders.add(String.valueOf(request.getHeader("Host")));
                    String sni = request.connection().indicatedServerName();
                    self[0].serverNames.add(String.valueOf(sni));
                    self[0].handler.handle(request);
                });
        self[0] = new LocalServer(vertx, server, certificate != null);
        server.listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return self[0];
    }

    /** What the server answers from now on. */
    public LocalServer answering(Handler<HttpServerRequest> handler) {
        this.handler = handler;
        return this;
    }

    public int port() {
        return server.actualPort();
    }

    /** A URL of this server under {@code host}, which the fetcher resolves itself. */
    public String url(String host, String path) {
        return (tls ? "https://" : "http://") + host + ":" + port() + path;
    }

    /**
     * Writes a body of {@code total} bytes in 64 KiB chunks, each once the previous one reached the socket, and
     * stops as soon as the connection closes. After {@code holdAt} bytes it holds still for {@link #HOLD} before
     * writing the rest: without the hold, kernel socket buffers on loopback (megabytes) could take in a whole 26 MB
     * body before the client's reset arrives, and the test could not tell "cut off" from "read to the end". With it,
     * a client that stops at the cap has closed the connection long before the server writes on, and a client that
     * reads to the end makes the server finish ({@link #finishedWriting}). {@link #bodyBytesWritten} counts what
     * reached the socket.
     */
    public void stream(HttpServerResponse response, long total, long holdAt) {
        Buffer chunk = Buffer.buffer(new byte[64 * 1024]);
        AtomicLong queued = new AtomicLong();
        AtomicBoolean held = new AtomicBoolean();
        Runnable[] next = new Runnable[1];
        next[0] = () -> {
            if (response.closed()) {
                return;
            }
            if (queued.get() >= total) {
                response.end().onSuccess(ended -> finishedWriting.set(true));
                return;
            }
            if (queued.get() >= holdAt && held.compareAndSet(false, true)) {
                vertx.setTimer(HOLD.toMillis(), fired -> next[0].run());
                return;
            }
            int size = (int) Math.min(chunk.length(), total - queued.get());
            queued.addAndGet(size);
            response.write(size == chunk.length() ? chunk : chunk.slice(0, size))
                    .onSuccess(written -> {
                        bodyBytesWritten.addAndGet(size);
                        // Through the context, not recursively: a long body must not grow the stack.
                        vertx.runOnContext(ignored -> next[0].run());
                    });
        };
        next[0].run();
    }

    /** Sends a redirect to {@code location}. */
    public static void redirect(HttpServerRequest request, String location) {
        request.response().setStatusCode(302).putHeader("Location", location).end();
    }

    public static Duration patience() {
        return Duration.ofSeconds(20);
    }

    @Override
    public void close() throws Exception {
        server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
}
