package io.imageworker.net;

import io.imageworker.support.BoundedBody;
import io.smallrye.mutiny.Uni;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.net.TrustOptions;
import io.vertx.ext.web.codec.spi.BodyStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.stream.Collectors;

/**
 * Downloads a URL the worker did not choose (an edit's {@code https://} reference, the {@code url} a gateway answered
 * with) without letting it reach anything the worker's network should keep to itself (server-side request forgery),
 * and without letting a large or slow answer hurt the worker. One copy of these rules, for every such URL.
 *
 * <p>The rules, applied to the URL and again to every redirect it leads to:
 *
 * <ul>
 *   <li>the caller's {@link Rules} decide whether the URL may be fetched at all (scheme, host) and which
 *       {@link AddressPolicy} its host's addresses must pass;
 *   <li>every address the host name resolves to passes that policy: if any does not, the URL is refused before any
 *       connection is opened;
 *   <li>the connection is opened to the address that was checked, not to the name, so a second DNS answer (DNS
 *       rebinding) cannot switch it; the name is still used for SNI, the {@code Host} header and certificate
 *       verification. Once connected, the address actually reached is checked again before any byte is sent;
 *   <li>a cloud metadata host name ({@link #METADATA_HOSTS}) is refused by its name, whatever it resolves to and
 *       whatever the caller's lists say;
 *   <li>redirects (301, 302, 303, 307, 308) are followed by hand, at most {@value #MAX_REDIRECTS}, each one checked as
 *       above; and a hop on a host the rules do not trust as internal ({@link Target#internal()}) never leads to one
 *       they do, whatever the scheme: an internal host is fetched from only when the URL itself names it, never because
 *       an outside host sent the worker there;
 *   <li>the whole download, redirects and name lookups included, must finish within the timeout;
 *   <li>the body is at most the cap: a larger {@code Content-Length} is refused without reading the body, and a body
 *       that grows past the cap while reading is cut off by resetting the connection, so memory never holds more
 *       than the cap.
 * </ul>
 *
 * <p>Every failure is a {@link FetchException}. Messages name the host, never the path or query, which may hold a
 * signature.
 *
 * <p>Why it is longer than 400 lines: the address checks ({@link AddressChecks}) and the redirects ({@link Redirects})
 * are classes of their own; what stays is one download's course on one Vert.x context (lookup, connect, answer, body
 * within the cap, the timeout and the cancel that may cut it at any step), and the {@link Rules} and {@link Target}
 * its callers give it.
 */
public final class GuardedFetcher {

    /** Redirects followed before the download is refused. */
    public static final int MAX_REDIRECTS = 3;

    /**
     * Names of cloud metadata endpoints (Google Cloud's, and AWS's old name), refused before any lookup: a resolver
     * that answers for them with another address (a proxy, a split horizon) must not make them reachable.
     */
    static final Set<String> METADATA_HOSTS =
            Set.of("metadata.google.internal", "metadata.goog", "instance-data.ec2.internal", "instance-data");

    private final Vertx vertx;
    private final HttpClient client;
    private final Duration timeout;
    private final long maxBytes;
    private final HostResolver resolver;

    /**
     * A fetcher with its own connections.
     *
     * @param timeout the whole download, redirects and name lookups included
     * @param maxBytes the largest body read
     * @param maxConnections connections open at once to one address
     * @param resolver {@link HostResolver#SYSTEM} but in tests
     * @param trustOptions which certificates are trusted; {@code null} for the JVM's default trust store
     */
    public GuardedFetcher(
            Vertx vertx,
            Duration timeout,
            long maxBytes,
            int maxConnections,
            HostResolver resolver,
            TrustOptions trustOptions) {
        this.vertx = vertx;
        this.timeout = timeout;
        this.maxBytes = maxBytes;
        this.resolver = resolver;
        HttpClientOptions options = new HttpClientOptions()
                // The default of a hop; a hop whose rules allow plain http says so in its request.
                .setSsl(true)
                .setVerifyHost(true)
                .setForceSni(true)
                // HTTP/1.1 only: resetting the stream closes the connection, which is how a body is cut off.
                .setProtocolVersion(HttpVersion.HTTP_1_1)
                .setUseAlpn(false)
                // A URL is fetched once; an idle connection to an outside host is of no use afterwards.
                .setKeepAlive(false)
                .setMaxPoolSize(Math.max(1, maxConnections))
                // No Accept-Encoding is sent and nothing is inflated: the cap counts the bytes as they arrive.
                .setTryUseCompression(false)
                .setDecompressionSupported(false)
                .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()))
                // A backstop for a connection left idle. Twice the timeout, so that a stalled download always ends
                // by its own timer, with the timeout failure, first.
                .setIdleTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1, 2 * timeout.toMillis())))
                .setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
        if (trustOptions != null) {
            options.setTrustOptions(trustOptions);
        }
        this.client = vertx.createHttpClient(options);
    }

    /**
     * The bytes at {@code url}, or a {@link FetchException} that says why not (refused when {@code url} is not a URL).
     *
     * @param rules which URLs, the first and every redirect, may be fetched, and from which addresses
     * @param holding told how many bytes the body holds as soon as that is known (see {@link BoundedBody})
     */
    public Uni<byte[]> fetch(String url, Rules rules, LongConsumer holding) {
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            // The URL itself is not repeated: its query may hold a signature.
            return Uni.createFrom().failure(FetchException.refused("not a valid URL"));
        }
        return Uni.createFrom().emitter(emitter -> {
            Download download = new Download(vertx.getOrCreateContext(), rules, holding);
            emitter.onTermination(download::cancel);
            download.start(uri).onComplete(done -> {
                if (done.succeeded()) {
                    emitter.complete(done.result());
                } else {
                    emitter.fail(done.cause());
                }
            });
        });
    }

    /** Closes the connections. */
    public void close() {
        client.close();
    }

    /** The caller's rules for each URL a download meets: the first one and every redirect. */
    public interface Rules {

        /**
         * Where {@code uri} goes, and under which address policy; or a {@link FetchException#refused} that says why
         * it must not be fetched at all.
         */
        Target target(URI uri);

        /** What these rules guard, in the plural, for the refusal of an address: {@code references}. */
        String fetched();
    }

    /**
     * Where one hop goes, once the URL has passed the caller's rules.
     *
     * @param host the host name, lower case, without IPv6 brackets
     * @param port the port
     * @param tls whether the hop is {@code https}
     * @param requestUri path and query as sent
     * @param policy the addresses the host may have
     * @param internal whether the rules trust the host as one of the operator's own network: only a URL that names
     *     it, or a redirect from another such host, may lead to it
     */
    public record Target(
            String host, int port, boolean tls, String requestUri, AddressPolicy policy, boolean internal) {

        /**
         * The host of {@code uri}, normalized, once it has passed the rules every URL shares: no user information
         * ({@code https://user@host/}), a valid host name.
         *
         * @param what how the messages name the URL, such as {@code reference URL}
         */
        public static String host(URI uri, String what) {
            if (uri.getRawUserInfo() != null) {
                throw FetchException.refused("a " + what + " must not carry user information");
            }
            if (uri.getHost() == null) {
                throw FetchException.refused("the " + what + " has no valid host name");
            }
            String host = normalizedHost(uri.getHost());
            if (METADATA_HOSTS.contains(host.endsWith(".") ? host.substring(0, host.length() - 1) : host)) {
                throw FetchException.refused(
                        "host '" + host + "' is a cloud metadata endpoint's name: it is never fetched from");
            }
            return host;
        }

        /** The target of {@code uri}, whose {@link #host(URI, String)} is {@code host}: its port is checked here. */
        public static Target of(URI uri, String host, boolean tls, AddressPolicy policy) {
            return of(uri, host, tls, policy, false);
        }

        /** {@link #of(URI, String, boolean, AddressPolicy)} of a host the rules trust as internal. */
        public static Target internal(URI uri, String host, boolean tls, AddressPolicy policy) {
            return of(uri, host, tls, policy, true);
        }

        private static Target of(URI uri, String host, boolean tls, AddressPolicy policy, boolean internal) {
            int port = uri.getPort() == -1 ? (tls ? 443 : 80) : uri.getPort();
            if (port < 1 || port > 65535) {
                throw FetchException.refused("port " + port + " of host '" + host + "' is not a valid port");
            }
            String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
            return new Target(host, port, tls, path + query, policy, internal);
        }
    }

    /** A configured list of host names as the rules compare them ({@link #normalizedHost}), blank ones left out. */
    public static Set<String> normalizedHosts(Optional<Set<String>> hosts) {
        return hosts.orElse(Set.of()).stream()
                .map(GuardedFetcher::normalizedHost)
                .filter(host -> !host.isEmpty())
                .collect(Collectors.toUnmodifiableSet());
    }

    /** A host name as the rules compare it: trimmed, lower case, without IPv6 brackets. */
    public static String normalizedHost(String host) {
        String trimmed = host.trim().toLowerCase(Locale.ROOT);
        if (trimmed.startsWith("[") && trimmed.endsWith("]")) {
            return trimmed.substring(1, trimmed.length() - 1);
        }
        return trimmed;
    }

    /**
     * One download. Every step runs on the one Vert.x context it was started on, so its fields need no locking;
     * name lookups run on a worker thread and report back to that context.
     */
    private final class Download {
        private final Context context;
        private final Rules rules;
        private final LongConsumer holding;
        private final Promise<byte[]> result = Promise.promise();
        private HttpClientRequest current;
        private String host = "?";

        Download(Context context, Rules rules, LongConsumer holding) {
            this.context = context;
            this.rules = rules;
            this.holding = holding;
        }

        Future<byte[]> start(URI uri) {
            context.runOnContext(ignored -> {
                long timer = vertx.setTimer(
                        Math.max(1, timeout.toMillis()),
                        fired -> finish(Future.failedFuture(new FetchException(
                                FetchException.Kind.TIMED_OUT,
                                "the download from host '" + host + "' did not finish within " + timeout.toMillis()
                                        + " ms"))));
                result.future().onComplete(done -> vertx.cancelTimer(timer));
                hop(uri, 0, null).onComplete(this::finish);
            });
            return result.future();
        }

        void cancel() {
            context.runOnContext(ignored -> finish(Future.failedFuture(stopped("the download was cancelled"))));
        }

        private void finish(AsyncResult<byte[]> outcome) {
            boolean first =
                    outcome.succeeded() ? result.tryComplete(outcome.result()) : result.tryFail(outcome.cause());
            if (first && outcome.failed() && current != null) {
                // Closes the connection: nothing more is read from a refused, timed-out or cancelled download.
                abandon(current);
            }
        }

        private boolean finished() {
            return result.future().isComplete();
        }

        /**
         * Fetches {@code uri}, the URL itself ({@code redirects == 0}, {@code from} null) or where a redirect from
         * {@code from} led.
         */
        private Future<byte[]> hop(URI uri, int redirects, Target from) {
            String via = redirects == 0 ? "" : "redirect " + redirects + " leads to a refused location: ";
            Target target;
            try {
                target = rules.target(uri);
            } catch (FetchException refusal) {
                return Future.failedFuture(refusal.prefixed(via));
            }
            Optional<FetchException> inward = Redirects.inward(from, target, via);
            if (inward.isPresent()) {
                return Future.failedFuture(inward.get());
            }
            host = target.host();
            // The resolver blocks, hence executeBlocking; unordered, so that lookups of concurrent downloads do not
            // queue behind each other.
            return context.executeBlocking(() -> resolver.resolve(target.host()), false)
                    .recover(error -> Future.failedFuture(new FetchException(
                            FetchException.Kind.FAILED, via + "host '" + target.host() + "' could not be resolved")))
                    .map(addresses -> AddressChecks.checked(target, addresses, via, rules.fetched()))
                    .compose(address -> get(target, address, via))
                    .compose(response -> answer(uri, target, response, redirects));
        }

        /** Connects to the checked address, checks the address reached, then sends the GET. */
        private Future<HttpClientResponse> get(Target target, InetAddress address, String via) {
            if (finished()) {
                return Future.failedFuture(stopped("the download was stopped"));
            }
            RequestOptions options = new RequestOptions()
                    .setMethod(HttpMethod.GET)
                    .setServer(SocketAddress.inetSocketAddress(new InetSocketAddress(address, target.port())))
                    .setHost(target.host())
                    .setPort(target.port())
                    .setSsl(target.tls())
                    .setURI(target.requestUri())
                    .setFollowRedirects(false)
                    .putHeader(HttpHeaders.USER_AGENT, "image-worker")
                    .putHeader(HttpHeaders.ACCEPT, "image/png, image/jpeg, image/webp");
            return client.request(options)
                    .recover(error -> Future.failedFuture(new FetchException(
                            FetchException.Kind.FAILED,
                            "could not connect to host '" + target.host() + "': " + error.getMessage())))
                    .compose(request -> {
                        current = request;
                        if (finished()) {
                            abandon(request);
                            return Future.failedFuture(stopped("the download was stopped"));
                        }
                        Optional<String> wrong = AddressChecks.reachedRefusal(
                                request.connection().remoteAddress(), address, target.policy());
                        if (wrong.isPresent()) {
                            abandon(request);
                            return Future.failedFuture(
                                    FetchException.refused(via + "host '" + target.host() + "': " + wrong.get()));
                        }
                        return request.send()
                                .recover(error -> Future.failedFuture(new FetchException(
                                        FetchException.Kind.FAILED,
                                        "host '" + target.host() + "' gave no answer: " + error.getMessage())));
                    });
        }

        /** Follows a redirect, refuses a failed answer, or reads the body within the cap. */
        private Future<byte[]> answer(URI uri, Target target, HttpClientResponse response, int redirects) {
            HttpClientRequest request = response.request();
            int status = response.statusCode();
            if (Redirects.isRedirect(status)) {
                abandon(request);
                return Redirects.next(uri, target, response.getHeader(HttpHeaders.LOCATION), status, redirects)
                        .compose(next -> hop(next, redirects + 1, target));
            }
            if (status != 200) {
                abandon(request);
                return Future.failedFuture(new FetchException(
                        FetchException.Kind.STATUS, status, "host '" + target.host() + "' answered " + status));
            }
            long declared = contentLength(response);
            if (declared > maxBytes) {
                abandon(request);
                return Future.failedFuture(new FetchException(
                        FetchException.Kind.TOO_LARGE,
                        "host '" + target.host() + "' announced " + declared + " bytes (Content-Length), over the "
                                + maxBytes + " bytes limit; not downloaded"));
            }
            // Nothing may be lost between the headers and the pipe below.
            response.pause();
            Promise<BodyStream<byte[]>> created = Promise.promise();
            new BoundedBody(maxBytes, holding).declaredBy(response).create(created);
            return created.future()
                    // endOnFailure(false): a body that broke off must fail, not complete with what arrived.
                    .compose(
                            body -> response.pipe().endOnFailure(false).to(body).compose(ended -> body.result()))
                    .recover(error -> {
                        abandon(request);
                        if (error instanceof BoundedBody.BodyTooLargeException) {
                            return Future.failedFuture(new FetchException(
                                    FetchException.Kind.TOO_LARGE,
                                    "the body from host '" + target.host() + "' is over the " + maxBytes
                                            + " bytes limit; cut off while reading"));
                        }
                        return Future.failedFuture(new FetchException(
                                FetchException.Kind.FAILED,
                                "the body from host '" + target.host() + "' broke off: " + error.getMessage()));
                    });
        }
    }

    private static FetchException stopped(String message) {
        return new FetchException(FetchException.Kind.CANCELLED, message);
    }

    /**
     * Stops a request and closes its connection, so nothing more is read or sent on it. Resetting alone is not
     * enough: a request reset before it was sent leaves its connection open in the client's pool.
     */
    private static void abandon(HttpClientRequest request) {
        request.reset();
        if (request.connection() != null) {
            request.connection().close();
        }
    }

    private static long contentLength(HttpClientResponse response) {
        String header = response.getHeader(HttpHeaders.CONTENT_LENGTH);
        if (header == null) {
            return -1;
        }
        try {
            return Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            // The HTTP codec fails such a response while reading; the cap holds either way.
            return -1;
        }
    }
}
