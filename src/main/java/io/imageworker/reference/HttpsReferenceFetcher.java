package io.imageworker.reference;

import io.imageworker.net.AddressPolicy;
import io.imageworker.net.DownloadSettings;
import io.imageworker.net.FetchException;
import io.imageworker.net.GuardedFetcher;
import io.imageworker.net.GuardedFetcher.Target;
import io.imageworker.net.HostResolver;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.net.TrustOptions;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.Locale;
import java.util.Set;

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
 *       refused before any connection is opened. No setting loosens this rule for references;
 *   <li>the resolving, connecting to the checked address, re-checking the address reached, redirects (at most
 *       {@value GuardedFetcher#MAX_REDIRECTS}), the {@code IMAGE_WORKER_DOWNLOAD_TIMEOUT} and the size cap are those of
 *       {@link GuardedFetcher}, shared with the download of a gateway's {@code url} answers;
 *   <li>the body is at most 25 MB ({@link ReferenceLoader#MAX_BYTES}, or {@code IMAGE_WORKER_DOWNLOAD_MAX_BYTES} when
 *       lower).
 * </ul>
 *
 * <p>Every failure is a {@link ReferenceRefusedException} whose message starts with the reference's name. Messages
 * name the host, never the path or query, which may hold a signature.
 */
@ApplicationScoped
public class HttpsReferenceFetcher {

    private final GuardedFetcher fetcher;
    private final GuardedFetcher.Rules rules;

    @Inject
    HttpsReferenceFetcher(Vertx vertx, DownloadSettings download, ReferenceSettings reference) {
        this(vertx, download, reference, AddressPolicy.PUBLIC_ONLY, null);
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
    HttpsReferenceFetcher(
            Vertx vertx,
            DownloadSettings download,
            ReferenceSettings reference,
            AddressPolicy addressPolicy,
            TrustOptions trustOptions) {
        Set<String> allowedHosts = GuardedFetcher.normalizedHosts(reference.allowedHosts());
        this.rules = new Rules(allowedHosts, addressPolicy);
        this.fetcher = new GuardedFetcher(
                vertx,
                download.timeout(),
                Math.min(ReferenceLoader.MAX_BYTES, download.maxBytes()),
                HttpClientOptions.DEFAULT_MAX_POOL_SIZE,
                HostResolver.SYSTEM,
                trustOptions);
    }

    /**
     * The bytes at an {@code https://} reference, or a {@link ReferenceRefusedException} whose message starts with
     * {@code name}.
     *
     * @param uri the reference as the request gave it
     * @param name how the refusal names the reference, such as {@code references[2]} or {@code mask}
     */
    public Uni<byte[]> fetch(String uri, String name) {
        return fetcher.fetch(uri, rules, bytes -> {})
                .onFailure()
                .transform(error -> error instanceof FetchException
                        ? new ReferenceRefusedException(name + ": " + error.getMessage())
                        : new ReferenceRefusedException(name + ": could not be fetched: " + error));
    }

    @PreDestroy
    void close() {
        fetcher.close();
    }

    /** Which URLs a reference, and every redirect it leads to, may name. */
    private record Rules(Set<String> allowedHosts, AddressPolicy addressPolicy) implements GuardedFetcher.Rules {

        @Override
        public Target target(URI uri) {
            String scheme = uri.getScheme();
            if (scheme == null || !scheme.equalsIgnoreCase("https")) {
                throw FetchException.refused("only https:// references are fetched, not "
                        + (scheme == null ? "a URL without" + " scheme" : scheme.toLowerCase(Locale.ROOT) + "://"));
            }
            String host = Target.host(uri, "reference URL");
            if (!allowedHosts.contains(host)) {
                throw FetchException.refused("host '" + host + "' is not in IMAGE_WORKER_REFERENCE_ALLOWED_HOSTS");
            }
            return Target.of(uri, host, true, addressPolicy);
        }

        @Override
        public String fetched() {
            return "references";
        }
    }
}
