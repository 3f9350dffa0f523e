package io.imageworker.net;

import io.vertx.core.Future;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Optional;
import java.util.Set;

/**
 * The redirects of a {@link GuardedFetcher} download, followed by hand: at most {@value GuardedFetcher#MAX_REDIRECTS},
 * each to a valid location resolved against the URL that sent it, and never from a host the rules do not trust as
 * internal to one they do ({@link GuardedFetcher.Target#internal()}): an internal host is fetched from only when the URL
 * itself names it. Each location is then checked as a URL of its own (the caller's rules, the addresses).
 */
final class Redirects {

    private static final Set<Integer> STATUSES = Set.of(301, 302, 303, 307, 308);

    private Redirects() {}

    /** Whether an answer of {@code status} is a redirect to follow. */
    static boolean isRedirect(int status) {
        return STATUSES.contains(status);
    }

    /**
     * Where the redirect answered ({@code status}, {@code location}) from {@code uri} on host {@code target} leads, the
     * {@code redirects}-th already followed; refused without a location, past the most redirects, or to a location
     * that is not a valid URL.
     */
    static Future<URI> next(URI uri, GuardedFetcher.Target target, String location, int status, int redirects) {
        if (location == null) {
            return Future.failedFuture(FetchException.refused(
                    "host '" + target.host() + "' answered " + status + " without a Location header"));
        }
        if (redirects >= GuardedFetcher.MAX_REDIRECTS) {
            return Future.failedFuture(
                    FetchException.refused("more than " + GuardedFetcher.MAX_REDIRECTS + " redirects"));
        }
        try {
            // resolve() drops the slash between an empty path and a relative location ("https://h" + "a"
            // gives "https://ha"): resolve against "/" then.
            URI base = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? uri.resolve("/") : uri;
            return Future.succeededFuture(base.resolve(new URI(location)));
        } catch (URISyntaxException | IllegalArgumentException e) {
            return Future.failedFuture(FetchException.refused(
                    "host '" + target.host() + "' redirected to a location that is not a valid URL"));
        }
    }

    /**
     * The refusal of a hop to {@code target} that a redirect from {@code from} (null for the URL itself) led to, when
     * it leads from a host not trusted as internal to one that is; empty otherwise.
     */
    static Optional<FetchException> inward(GuardedFetcher.Target from, GuardedFetcher.Target target, String via) {
        if (from != null && !from.internal() && target.internal()) {
            return Optional.of(FetchException.refused(via + "host '" + from.host()
                    + "' is not an internal host and may not lead to internal host '" + target.host()
                    + "': an internal host is fetched from only when the URL itself names it"));
        }
        return Optional.empty();
    }
}
