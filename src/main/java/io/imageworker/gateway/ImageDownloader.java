package io.imageworker.gateway;

import io.imageworker.config.WorkerConfig;
import io.imageworker.net.AddressPolicy;
import io.imageworker.net.DownloadSettings;
import io.imageworker.net.FetchException;
import io.imageworker.net.GuardedFetcher;
import io.imageworker.net.GuardedFetcher.Target;
import io.imageworker.net.HostResolver;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.core.net.TrustOptions;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.Locale;
import java.util.Set;
import java.util.function.LongConsumer;

/**
 * Downloads an image the gateway returned as a temporary {@code url}, at once (the gateway contract, Answers), with the download
 * timeout and the size cap enforced while reading. The URL itself is never passed on.
 *
 * <p>The URL comes from the gateway, not from the worker: a misbehaving or compromised gateway could point it at the
 * cloud metadata endpoint, the worker's own machine or a service of its network. So it goes through the same checked
 * download as an {@code https://} reference ({@link GuardedFetcher}: the address rule after name resolution, the
 * connection to the checked address, every redirect checked again), with these rules for the URL and every redirect:
 *
 * <ul>
 *   <li>{@code https} on public addresses only ({@link AddressPolicy#PUBLIC_ONLY}), on any host: a gateway's files may
 *       be served by any CDN or store, so there is no host allow-list;
 *   <li>except a host named in {@code IMAGE_WORKER_GATEWAY_URL_INTERNAL_HOSTS}: the operator runs it in its own
 *       network, so plain {@code http} and loopback, private and carrier-grade NAT addresses are allowed for it
 *       ({@link AddressPolicy#orInternal()}); cloud metadata addresses and names never are; and only when the URL
 *       itself names such a host: a redirect from any other host to it is refused, whatever its scheme;
 *   <li>no user information in the URL.
 * </ul>
 *
 * <p>A refused URL is never connected to; the download fails for good (not retried), and the request with {@code
 * INVALID_OUTPUT} and a reason that names the host, the address and why ({@link ImageReceiver}).
 */
@ApplicationScoped
public class ImageDownloader {

    private final GuardedFetcher fetcher;
    private final Rules rules;

    @Inject
    ImageDownloader(Vertx vertx, WorkerConfig config, GatewaySettings gateway, DownloadSettings download) {
        this(vertx, config, gateway, download, AddressPolicy.PUBLIC_ONLY, HostResolver.SYSTEM, null);
    }

    /**
     * Test hook: tests pass a policy that also allows the loopback address of their own local server, a resolver that
     * gives test names their addresses, and the trust options of a self-signed certificate. Production code always
     * goes through the injected constructor: {@link AddressPolicy#PUBLIC_ONLY}, the system's resolver and the JVM's
     * trusted certificate authorities.
     *
     * @param addressPolicy the addresses of a host not in {@code IMAGE_WORKER_GATEWAY_URL_INTERNAL_HOSTS}
     * @param trustOptions which certificates are trusted; {@code null} for the JVM's default trust store
     */
    ImageDownloader(
            Vertx vertx,
            WorkerConfig config,
            GatewaySettings gateway,
            DownloadSettings download,
            AddressPolicy addressPolicy,
            HostResolver resolver,
            TrustOptions trustOptions) {
        Set<String> internalHosts = GuardedFetcher.normalizedHosts(gateway.urlInternalHosts());
        this.rules = new Rules(internalHosts, addressPolicy);
        this.fetcher = new GuardedFetcher(
                vertx,
                download.timeout(),
                download.maxBytes(),
                Math.max(1, config.concurrency()),
                resolver,
                trustOptions);
    }

    /**
     * The bytes at {@code url}, or a {@link DownloadException} that says why not; {@code holding} is told how many bytes
     * the body holds as soon as that is known ({@link io.imageworker.support.BoundedBody}).
     */
    public Uni<byte[]> download(String url, LongConsumer holding) {
        return fetcher.fetch(url, rules, holding).onFailure().transform(ImageDownloader::describe);
    }

    private static Throwable describe(Throwable error) {
        if (!(error instanceof FetchException failure)) {
            return new DownloadException(false, true, "the image download failed: " + error);
        }
        return switch (failure.kind()) {
            case REFUSED ->
                new DownloadException(false, false, "the gateway's image url was refused: " + failure.getMessage());
            case TIMED_OUT ->
                new DownloadException(true, "the image download did not finish in time: " + failure.getMessage());
            case STATUS -> {
                int status = failure.status();
                // 403/404 is an expired temporary URL; other statuses may pass.
                boolean transientStatus = status >= 500 || status == 429;
                yield new DownloadException(
                        false,
                        transientStatus,
                        "the image download answered " + status
                                + (status == 403 || status == 404 ? " (the temporary URL has expired or is wrong)" : "")
                                + ": " + failure.getMessage());
            }
            case TOO_LARGE ->
                new DownloadException(false, false, "the downloaded image is too large: " + failure.getMessage());
            case FAILED, CANCELLED ->
                new DownloadException(false, true, "the image download failed: " + failure.getMessage());
        };
    }

    @PreDestroy
    void close() {
        fetcher.close();
    }

    /** Which URLs a gateway answer, and every redirect it leads to, may name. */
    private record Rules(Set<String> internalHosts, AddressPolicy addressPolicy) implements GuardedFetcher.Rules {

        @Override
        public Target target(URI uri) {
            String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
            if (!"https".equals(scheme) && !"http".equals(scheme)) {
                throw FetchException.refused("only https:// answer URLs are fetched, not "
                        + (scheme == null ? "a URL without scheme" : scheme + "://"));
            }
            String host = Target.host(uri, "gateway's image URL");
            boolean internal = internalHosts.contains(host);
            if (scheme.equals("http") && !internal) {
                throw FetchException.refused("only https:// answer URLs are fetched, not http:// (host '" + host
                        + "' is not in IMAGE_WORKER_GATEWAY_URL_INTERNAL_HOSTS)");
            }
            return internal
                    ? Target.internal(uri, host, scheme.equals("https"), addressPolicy.orInternal())
                    : Target.of(uri, host, scheme.equals("https"), addressPolicy);
        }

        @Override
        public String fetched() {
            return "answer URLs";
        }
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
