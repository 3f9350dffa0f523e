package io.imageworker.reference;

import io.imageworker.config.WorkerConfig;
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
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Fetches an {@code https://} reference without letting a request reach anything the worker's network should keep
 * to itself (server-side request forgery), and without letting a large or slow answer hurt the worker.
 *
 * <p>The rules, applied to the reference and again to every redirect it leads to:
 *
 * <ul>
 *   <li>the scheme is {@code https}: no plain {@code http}, no other scheme;
 *   <li>no user information ({@code https://user@host/}) in the URL;
 *   <li>the host is one of {@code IMAGE_WORKER_REFERENCE_ALLOWED_HOSTS}, compared exactly and case-insensitively (no
 *       wildcards, no subdomains); an empty list allows none;
 *   <li>any port: the allow-list trusts a host, and TLS with host name verification proves that whatever answers on
 *       that port holds a certificate for that host. The address rule below, not the port, is what keeps internal
 *       services out of reach;
 *   <li>every address the host name resolves to is a public unicast address ({@link AddressPolicy#PUBLIC_ONLY}): if
 *       any is loopback, link-local (cloud metadata), private, unspecified, multicast and so on, the reference is
 *       refused before any connection is opened;
 *   <li>the connection is opened to the address that was checked, not to the name, so a second DNS answer (DNS
 *       rebinding) cannot switch it; the name is still used for SNI, the {@code Host} header and certificate
 *       verification. Once connected, the address actually reached is checked again before any byte is sent;
 *   <li>redirects (301, 302, 303, 307, 308) are followed by hand, at most {@value #MAX_REDIRECTS}, each one checked as
 *       above;
 *   <li>the whole download, redirects and name lookups included, must finish within {@code
 *       IMAGE_WORKER_DOWNLOAD_TIMEOUT};
 *   <li>the body is at most 25 MB ({@link ReferenceLoader#MAX_BYTES}, or {@code IMAGE_WORKER_DOWNLOAD_MAX_BYTES} when
 *       lower): a larger {@code Content-Length} is refused without reading the body, and a body that grows past the
 *       cap while reading is cut off by resetting the connection, so memory never holds more than the cap.
 * </ul>
 *
 * <p>Every failure is a {@link ReferenceRefusedException} whose message starts with the reference's name. Messages
 * name the host, never the path or query, which may hold a signature.
 */
@ApplicationScoped
public class HttpsReferenceFetcher {

    /** Redirects followed before the reference is refused. */
    static final int MAX_REDIRECTS = 3;

    private static final Set<Integer> REDIRECT_STATUSES = Set.of(301, 302, 303, 307, 308);

    private final Vertx vertx;
    private final HttpClient client;
    private final Set<String> allowedHosts;
    private final Duration timeout;
    private final long maxBytes;
    private final AddressPolicy addressPolicy;

    @Inject
    HttpsReferenceFetcher(Vertx vertx, WorkerConfig config) {
        this(vertx, config, AddressPolicy.PUBLIC_ONLY, null);
    }

    /**
     * Test hook, and the only way to change the address rule: tests pass a policy that also allows the loopback
     * address of their own local TLS server, and the trust options of its self-signed certificate. Production code
     * always goes through the injected constructor, which uses {@link AddressPolicy#PUBLIC_ONLY} and the JVM's
     * trusted certificate authorities.
     *
     * @param addressPolicy which resolved and connected addresses are allowed
     * @param trustOptions which certificates are trusted; {@code null} for the JVM's default trust store
     */
    HttpsReferenceFetcher(Vertx vertx, WorkerConfig config, AddressPolicy addressPolicy, TrustOptions trustOptions) {
        this.vertx = vertx;
        this.allowedHosts = config.reference().allowedHosts().orElse(Set.of()).stream()
                .map(HttpsReferenceFetcher::normalizedHost)
                .filter(host -> !host.isEmpty())
                .collect(Collectors.toUnmodifiableSet());
        this.timeout = config.download().timeout();
        this.maxBytes = Math.min(ReferenceLoader.MAX_BYTES, config.download().maxBytes());
        this.addressPolicy = addressPolicy;
        HttpClientOptions options = new HttpClientOptions()
                .setSsl(true)
                .setVerifyHost(true)
                .setForceSni(true)
                // HTTP/1.1 only: resetting the stream closes the connection, which is how a body is cut off.
                .setProtocolVersion(HttpVersion.HTTP_1_1)
                .setUseAlpn(false)
                // A reference is fetched once; an idle connection to an outside host is of no use afterwards.
                .setKeepAlive(false)
                // No Accept-Encoding is sent and nothing is inflated: the cap counts the bytes as they arrive.
                .setTryUseCompression(false)
                .setDecompressionSupported(false)
                .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()))
                // A backstop for a connection left idle. Twice the timeout, so that a stalled download always ends
                // by its own timer, with the timeout refusal, first.
                .setIdleTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1, 2 * timeout.toMillis())))
                .setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
        if (trustOptions != null) {
            options.setTrustOptions(trustOptions);
        }
        this.client = vertx.createHttpClient(options);
    }

    /**
     * The bytes at an {@code https://} reference, or a {@link ReferenceRefusedException} whose message starts with
     * {@code name}.
     *
     * @param uri the reference as the request gave it
     * @param name how the refusal names the reference, such as {@code references[2]} or {@code mask}
     */
    public Uni<byte[]> fetch(String uri, String name) {
        return Uni.createFrom().emitter(emitter -> {
            Download download = new Download(vertx.getOrCreateContext());
            emitter.onTermination(download::cancel);
            download.start(uri).onComplete(done -> {
                if (done.succeeded()) {
                    emitter.complete(done.result());
                } else if (done.cause() instanceof Refusal) {
                    emitter.fail(new ReferenceRefusedException(
                            name + ": " + done.cause().getMessage()));
                } else {
                    emitter.fail(new ReferenceRefusedException(name + ": could not be fetched: " + done.cause()));
                }
            });
        });
    }

    @PreDestroy
    void close() {
        client.close();
    }

    /**
     * One download. Every step runs on the one Vert.x context it was started on, so its fields need no locking;
     * name lookups run on a worker thread and report back to that context.
     */
    private final class Download {
        private final Context context;
        private final Promise<byte[]> result = Promise.promise();
        private HttpClientRequest current;
        private String host = "?";

        Download(Context context) {
            this.context = context;
        }

        Future<byte[]> start(String uri) {
            context.runOnContext(ignored -> {
                long timer = vertx.setTimer(
                        Math.max(1, timeout.toMillis()),
                        fired -> finish(Future.failedFuture(new Refusal("the download from host '" + host
                                + "' did not finish within " + timeout.toMillis() + " ms"))));
                result.future().onComplete(done -> vertx.cancelTimer(timer));
                URI parsed;
                try {
                    parsed = new URI(uri);
                } catch (URISyntaxException e) {
                    // The URL itself is not repeated: its query may hold a signature.
                    finish(Future.failedFuture(new Refusal("the reference is not a valid URL")));
                    return;
                }
                hop(parsed, 0).onComplete(this::finish);
            });
            return result.future();
        }

        void cancel() {
            context.runOnContext(ignored -> finish(Future.failedFuture(new Refusal("the download was cancelled"))));
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

        /** Fetches {@code uri}, the reference itself ({@code redirects == 0}) or where a redirect led. */
        private Future<byte[]> hop(URI uri, int redirects) {
            String via = redirects == 0 ? "" : "redirect " + redirects + " leads to a refused location: ";
            Target target;
            try {
                target = Target.of(uri, allowedHosts);
            } catch (Refusal refusal) {
                return Future.failedFuture(new Refusal(via + refusal.getMessage()));
            }
            host = target.host();
            // The JDK resolver on a worker thread rather than the Vert.x DNS client: it answers exactly as the
            // system does (hosts file, search domains, nsswitch) and gives every A and AAAA record at once, which
            // is what the "no resolved address may be forbidden" rule must see. It blocks, hence executeBlocking;
            // unordered, so lookups of concurrent downloads do not queue behind each other.
            return context.executeBlocking(() -> InetAddress.getAllByName(target.host()), false)
                    .recover(error -> Future.failedFuture(
                            new Refusal(via + "host '" + target.host() + "' could not be resolved")))
                    .map(addresses -> checked(target, addresses, via))
                    .compose(address -> get(target, address, via))
                    .compose(response -> answer(uri, target, response, redirects));
        }

        /** The address to connect to, once every address of the host has passed the policy. */
        private InetAddress checked(Target target, InetAddress[] addresses, String via) {
            for (InetAddress address : addresses) {
                Optional<String> refusal = addressPolicy.refusal(address);
                if (refusal.isPresent()) {
                    throw new Refusal(via + "host '" + target.host() + "' has address " + address.getHostAddress()
                            + ", which is " + refusal.get() + ": references are never fetched from such an address");
                }
            }
            return addresses[0];
        }

        /** Connects to the checked address, checks the address reached, then sends the GET. */
        private Future<HttpClientResponse> get(Target target, InetAddress address, String via) {
            if (finished()) {
                return Future.failedFuture(new Refusal("the download was stopped"));
            }
            RequestOptions options = new RequestOptions()
                    .setMethod(HttpMethod.GET)
                    .setServer(SocketAddress.inetSocketAddress(new InetSocketAddress(address, target.port())))
                    .setHost(target.host())
                    .setPort(target.port())
                    .setSsl(true)
                    .setURI(target.requestUri())
                    .setFollowRedirects(false)
                    .putHeader(HttpHeaders.USER_AGENT, "image-worker")
                    .putHeader(HttpHeaders.ACCEPT, "image/png, image/jpeg, image/webp");
            return client.request(options)
                    .recover(error -> Future.failedFuture(
                            new Refusal("could not connect to host '" + target.host() + "': " + error.getMessage())))
                    .compose(request -> {
                        current = request;
                        if (finished()) {
                            abandon(request);
                            return Future.failedFuture(new Refusal("the download was stopped"));
                        }
                        Optional<String> wrong = reachedAddressRefusal(request, address);
                        if (wrong.isPresent()) {
                            abandon(request);
                            return Future.failedFuture(
                                    new Refusal(via + "host '" + target.host() + "': " + wrong.get()));
                        }
                        return request.send()
                                .recover(error -> Future.failedFuture(new Refusal(
                                        "host '" + target.host() + "' gave no answer: " + error.getMessage())));
                    });
        }

        /** Why the connection's remote address must not be used, or empty when it is the address checked. */
        private Optional<String> reachedAddressRefusal(HttpClientRequest request, InetAddress checked) {
            SocketAddress remote = request.connection().remoteAddress();
            if (remote == null || !remote.isInetSocket() || remote.hostAddress() == null) {
                return Optional.of("the connection has no IP address");
            }
            String literal = remote.hostAddress();
            // Netty reports the socket's numeric address. Anything else is refused rather than handed to
            // getByName, which would look a name up, blocking the event loop.
            if (!literal.contains(":") && !literal.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}")) {
                return Optional.of("the connection's address is not numeric");
            }
            InetAddress reached;
            try {
                reached = InetAddress.getByName(literal);
            } catch (UnknownHostException e) {
                return Optional.of("the connection's address cannot be read");
            }
            if (!reached.equals(checked)) {
                return Optional.of("the connection reached " + reached.getHostAddress() + ", not the address checked");
            }
            return addressPolicy
                    .refusal(reached)
                    .map(kind -> "the connection reached " + reached.getHostAddress() + ", which is " + kind);
        }

        /** Follows a redirect, refuses a failed answer, or reads the body within the cap. */
        private Future<byte[]> answer(URI uri, Target target, HttpClientResponse response, int redirects) {
            HttpClientRequest request = response.request();
            int status = response.statusCode();
            if (REDIRECT_STATUSES.contains(status)) {
                abandon(request);
                String location = response.getHeader(HttpHeaders.LOCATION);
                if (location == null) {
                    return Future.failedFuture(new Refusal(
                            "host '" + target.host() + "' answered " + status + " without a Location header"));
                }
                if (redirects >= MAX_REDIRECTS) {
                    return Future.failedFuture(new Refusal("more than " + MAX_REDIRECTS + " redirects"));
                }
                URI next;
                try {
                    // resolve() drops the slash between an empty path and a relative location ("https://h" + "a"
                    // gives "https://ha"): resolve against "/" then.
                    URI base = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? uri.resolve("/") : uri;
                    next = base.resolve(new URI(location));
                } catch (URISyntaxException | IllegalArgumentException e) {
                    return Future.failedFuture(new Refusal(
                            "host '" + target.host() + "' redirected to a location that is not a valid URL"));
                }
                return hop(next, redirects + 1);
            }
            if (status != 200) {
                abandon(request);
                return Future.failedFuture(new Refusal("host '" + target.host() + "' answered " + status));
            }
            long declared = contentLength(response);
            if (declared > maxBytes) {
                abandon(request);
                return Future.failedFuture(new Refusal("host '" + target.host() + "' announced " + declared
                        + " bytes (Content-Length), over the " + maxBytes + " bytes limit; not downloaded"));
            }
            // Nothing may be lost between the headers and the pipe below.
            response.pause();
            Promise<BodyStream<byte[]>> created = Promise.promise();
            new BoundedBody(maxBytes).create(created);
            return created.future()
                    // endOnFailure(false): a body that broke off must fail, not complete with what arrived.
                    .compose(
                            body -> response.pipe().endOnFailure(false).to(body).compose(ended -> body.result()))
                    .recover(error -> {
                        abandon(request);
                        if (error instanceof BoundedBody.BodyTooLargeException) {
                            return Future.failedFuture(new Refusal("the body from host '" + target.host()
                                    + "' is over the " + maxBytes + " bytes limit; cut off while reading"));
                        }
                        return Future.failedFuture(new Refusal(
                                "the body from host '" + target.host() + "' broke off: " + error.getMessage()));
                    });
        }
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

    private static String normalizedHost(String host) {
        String trimmed = host.trim().toLowerCase(Locale.ROOT);
        if (trimmed.startsWith("[") && trimmed.endsWith("]")) {
            return trimmed.substring(1, trimmed.length() - 1);
        }
        return trimmed;
    }

    /**
     * Where one hop goes, once the URL has passed the scheme, user information and host rules.
     *
     * @param host the host name, lower case, without IPv6 brackets
     * @param port the port, 443 when the URL has none
     * @param requestUri path and query as sent
     */
    private record Target(String host, int port, String requestUri) {
        static Target of(URI uri, Set<String> allowedHosts) {
            String scheme = uri.getScheme();
            if (scheme == null || !scheme.equalsIgnoreCase("https")) {
                throw new Refusal("only https:// references are fetched, not "
                        + (scheme == null ? "a URL without" + " scheme" : scheme.toLowerCase(Locale.ROOT) + "://"));
            }
            if (uri.getRawUserInfo() != null) {
                throw new Refusal("a reference URL must not carry user information");
            }
            if (uri.getHost() == null) {
                throw new Refusal("the reference URL has no valid host name");
            }
            String host = normalizedHost(uri.getHost());
            if (!allowedHosts.contains(host)) {
                throw new Refusal("host '" + host + "' is not in IMAGE_WORKER_REFERENCE_ALLOWED_HOSTS");
            }
            int port = uri.getPort() == -1 ? 443 : uri.getPort();
            if (port < 1 || port > 65535) {
                throw new Refusal("port " + port + " of host '" + host + "' is not a valid port");
            }
            String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
            return new Target(host, port, path + query);
        }
    }

    /** Why a download was refused; becomes the message of a {@link ReferenceRefusedException}. */
    private static final class Refusal extends RuntimeException {
        Refusal(String message) {
            super(message, null, false, false);
        }
    }
}
