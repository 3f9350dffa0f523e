package io.imageworker.testing;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.SocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A recording reverse proxy in front of the real S3 store: the worker talks to the store through it, so a test can see
 * which S3 operations a request made (a HEAD, a GET and its {@code Range}) and can make the store unreachable for some
 * keys only, as a store that is down would be, while the rest of the worker's storage (result documents, images)
 * keeps working.
 *
 * <p>Requests are forwarded unchanged, {@code Host} header included, so the client's AWS signature stays valid; only
 * hop-by-hop headers and {@code Expect} (answered here) are dropped. Bodies are streamed, never held.
 */
public final class StoreProxy implements AutoCloseable {

    /**
     * One S3 request as the proxy saw it.
     *
     * @param method the HTTP method
     * @param path the path, {@code /bucket/key} (path-style)
     * @param range the {@code Range} header, or null
     * @param status the store's status; 0 when the proxy dropped the connection instead
     * @param expect the {@code Expect} header, or null
     */
    public record Exchange(String method, String path, String range, int status, String expect) {}

    private static final Set<String> NOT_FORWARDED = Set.of(
            "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "expect");

    private static StoreProxy shared;

    private final Vertx vertx;
    private final HttpClient client;
    private final HttpServer server;
    private final URI target;
    private final List<Exchange> exchanges = new CopyOnWriteArrayList<>();
    private volatile String unreachable;
    private volatile Refusal refusal;

    /** An answer given instead of the store's to the requests whose path contains {@code fragment}. */
    private record Refusal(String fragment, int status, String code) {}

    private StoreProxy(URI target) {
        this.target = target;
        this.vertx = Vertx.vertx();
        this.client = vertx.createHttpClient(new HttpClientOptions().setMaxPoolSize(64));
        // The 100 Continue is answered in forward(): answered automatically, the request reaches it without its
        // Expect header, and no test could see that an upload asked for one.
        // HTTP/1.1 only, as S3 answers: a client that offers an upgrade to cleartext HTTP/2 (Java's HttpClient does by
        // default) keeps HTTP/1.1, and every request has the Host header that forward() reads.
        this.server = vertx.createHttpServer(new HttpServerOptions().setHttp2ClearTextEnabled(false))
                .requestHandler(this::forward);
        await(server.listen(0, "127.0.0.1"));
    }

    /** The one proxy of this JVM, in front of {@code target}; started on first use. */
    public static synchronized StoreProxy shared(URI target) {
        if (shared == null) {
            shared = new StoreProxy(target);
            Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "store-proxy-stop"));
        }
        return shared;
    }

    /** The one proxy of this JVM; it must have been started. */
    public static synchronized StoreProxy shared() {
        if (shared == null) {
            throw new IllegalStateException("the store proxy is started by StoreProxyTestResource");
        }
        return shared;
    }

    /** The endpoint to give an S3 client instead of the store's. */
    public String endpoint() {
        return "http://127.0.0.1:" + server.actualPort();
    }

    /** The requests whose path contains {@code fragment}, in arrival order. */
    public List<Exchange> exchangesFor(String fragment) {
        return exchanges.stream().filter(e -> e.path().contains(fragment)).toList();
    }

    /**
     * Closes, without an answer, every connection carrying a request whose path contains {@code fragment}: the store
     * looks down for those keys. {@code null} makes every key reachable again.
     */
    public void dropConnectionsFor(String fragment) {
        unreachable = fragment;
    }

    /**
     * Answers every request whose path contains {@code fragment} with {@code status} and an S3 error document of
     * {@code code} (such as {@code AccessDenied} or {@code SlowDown}), as a store refusing or too busy for those keys
     * would, instead of forwarding it. {@code null} forwards every request again.
     */
    public void answerFor(String fragment, int status, String code) {
        refusal = fragment == null ? null : new Refusal(fragment, status, code);
    }

    private void forward(HttpServerRequest request) {
        String path = request.path();
        String range = request.getHeader("Range");
        String expect = request.getHeader("Expect");
        if ("100-continue".equalsIgnoreCase(expect)) {
            request.response().writeContinue();
        }
        String dropped = unreachable;
        if (dropped != null && path.contains(dropped)) {
            exchanges.add(new Exchange(request.method().name(), path, range, 0, expect));
            request.connection().close();
            return;
        }
        Refusal refused = refusal;
        if (refused != null && path.contains(refused.fragment())) {
            exchanges.add(new Exchange(request.method().name(), path, range, refused.status(), expect));
            String body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + refused.code()
                    + "</Code><Message>" + refused.code() + "</Message><Resource>" + path + "</Resource></Error>";
            // The body is read first, so that the client sees the answer, not a connection closed under its upload.
            request.body().onComplete(ignored -> request.response()
                    .setStatusCode(refused.status())
                    .putHeader("Content-Type", "application/xml")
                    .end(request.method().name().equals("HEAD") ? "" : body));
            return;
        }
        request.pause();
        String host = request.getHeader("Host");
        int colon = host.lastIndexOf(':');
        RequestOptions options = new RequestOptions()
                .setMethod(request.method())
                .setServer(SocketAddress.inetSocketAddress(target.getPort(), target.getHost()))
                .setHost(colon < 0 ? host : host.substring(0, colon))
                .setPort(colon < 0 ? 80 : Integer.parseInt(host.substring(colon + 1)))
                .setURI(request.uri());
        client.request(options)
                .compose(out -> {
                    request.headers().forEach(header -> {
                        String name = header.getKey().toLowerCase(Locale.ROOT);
                        if (!NOT_FORWARDED.contains(name) && !name.equals("host")) {
                            out.headers().add(header.getKey(), header.getValue());
                        }
                    });
                    if (request.getHeader("Content-Length") == null
                            && "chunked".equalsIgnoreCase(request.getHeader("Transfer-Encoding"))) {
                        out.setChunked(true);
                    }
                    return out.send(request);
                })
                .onSuccess(answer -> answer(request, answer, path, range))
                .onFailure(error -> {
                    exchanges.add(new Exchange(request.method().name(), path, range, 502, request.getHeader("Expect")));
                    request.response().setStatusCode(502).end();
                });
    }

    private void answer(HttpServerRequest request, HttpClientResponse answer, String path, String range) {
        exchanges.add(
                new Exchange(request.method().name(), path, range, answer.statusCode(), request.getHeader("Expect")));
        var response = request.response().setStatusCode(answer.statusCode());
        answer.headers().forEach(header -> {
            if (!NOT_FORWARDED.contains(header.getKey().toLowerCase(Locale.ROOT))) {
                response.headers().add(header.getKey(), header.getValue());
            }
        });
        if (response.headers().get("Content-Length") == null) {
            response.setChunked(true);
        }
        response.send(answer);
    }

    @Override
    public void close() {
        await(vertx.close());
    }

    private static <T> T await(io.vertx.core.Future<T> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("the store proxy did not start or stop", e);
        }
    }
}
