package io.imageworker.testing.gateway;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/** The real routes of each flavour and how a path that is none of them is answered. */
final class GatewayRoutes {

    static final String GENERATIONS = "/v1/images/generations";
    static final String EDITS = "/v1/images/edits";

    /** What a real route does. */
    enum Endpoint {
        GENERATIONS,
        EDITS,
        CHAT,
        EMBEDDINGS,
        MESSAGES,
        IMAGE_BATCH,
        BATCH,
        PRICING,
        MODELS,
        V1BETA_MODELS
    }

    private record Route(String path, Set<String> methods, Endpoint endpoint, Set<Flavour> flavours) {}

    private static final Set<Flavour> BOTH = Set.of(Flavour.SPEC, Flavour.OPEN_SOURCE);

    private static final List<Route> ROUTES = List.of(
            new Route(GENERATIONS, Set.of("POST"), Endpoint.GENERATIONS, BOTH),
            new Route(EDITS, Set.of("POST"), Endpoint.EDITS, BOTH),
            new Route("/v1/chat/completions", Set.of("POST"), Endpoint.CHAT, BOTH),
            new Route("/v1/embeddings", Set.of("POST"), Endpoint.EMBEDDINGS, BOTH),
            new Route("/v1/messages", Set.of("POST"), Endpoint.MESSAGES, BOTH),
            // The specification names two batch routes; the open-source gateway has neither: 404.
            new Route("/v1/image/batch", Set.of("POST"), Endpoint.IMAGE_BATCH, Set.of(Flavour.SPEC)),
            new Route("/v1/batch", Set.of("GET", "POST"), Endpoint.BATCH, Set.of(Flavour.SPEC)),
            new Route("/api/pricing", Set.of("GET"), Endpoint.PRICING, BOTH),
            // Routes of the open-source gateway the specification does not list.
            new Route("/v1/models", Set.of("GET"), Endpoint.MODELS, Set.of(Flavour.OPEN_SOURCE)),
            new Route("/v1beta/models", Set.of("GET"), Endpoint.V1BETA_MODELS, Set.of(Flavour.OPEN_SOURCE)));

    private GatewayRoutes() {}

    /** The endpoint serving exactly this method and path in this flavour. */
    static Optional<Endpoint> find(String method, String path, Flavour flavour) {
        return ROUTES.stream()
                .filter(r -> r.path.equals(path) && r.methods.contains(method) && r.flavours.contains(flavour))
                .map(Route::endpoint)
                .findFirst();
    }

    /**
     * Where gin's trailing-slash redirect would send this request: the path without its last {@code /} when that is
     * a route for this method.
     */
    static Optional<String> trailingSlashTarget(String method, String path, Flavour flavour) {
        if (path.length() > 1 && path.endsWith("/")) {
            String target = path.substring(0, path.length() - 1);
            if (find(method, target, flavour).isPresent()) {
                return Optional.of(target);
            }
        }
        return Optional.empty();
    }

    /** new-api answers an unmatched path with JSON 404 when its raw URI starts with one of these, else HTML. */
    static boolean isApiPrefixed(String path) {
        return path.startsWith("/v1") || path.startsWith("/api") || path.startsWith("/assets");
    }
}
