package io.imageworker.gateway;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * The gateway's address, normalized once. The addressing rules (gateway contract §2) turn a missing {@code /v1}, a
 * doubled path or a trailing slash into 404 {@code Invalid URL} on every call, so {@code https://host},
 * {@code https://host/}, {@code https://host/v1} and {@code https://host/v1/} all become {@code https://host/v1}.
 */
public record GatewayEndpoint(URI apiBase) {

    /** Path of text-to-image. */
    public static final String GENERATIONS = "/images/generations";

    /** Path of image-to-image. */
    public static final String EDITS = "/images/edits";

    /** Path of chat completions, used only by unbillable probes. */
    public static final String CHAT = "/chat/completions";

    /**
     * Parses and normalizes a configured base URL.
     *
     * @throws IllegalArgumentException with a message naming the setting, when it is not an http(s) origin
     */
    public static GatewayEndpoint parse(String configured) {
        if (configured == null || configured.isBlank()) {
            throw new IllegalArgumentException("IMAGE_WORKER_GATEWAY_BASE_URL is empty");
        }
        URI uri;
        try {
            uri = new URI(configured.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("IMAGE_WORKER_GATEWAY_BASE_URL is not a URL: " + e.getMessage());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
            throw new IllegalArgumentException(
                    "IMAGE_WORKER_GATEWAY_BASE_URL must be an http:// or https:// origin, e.g. https://gateway.example.com");
        }
        if (uri.getQuery() != null || uri.getFragment() != null) {
            throw new IllegalArgumentException("IMAGE_WORKER_GATEWAY_BASE_URL must not carry a query or a fragment");
        }
        String path = uri.getPath() == null ? "" : uri.getPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        if (path.endsWith("/v1")) {
            path = path.substring(0, path.length() - 3);
        }
        return new GatewayEndpoint(URI.create(scheme + "://" + uri.getRawAuthority() + path + "/v1"));
    }

    /** The absolute URI of an operation path such as {@link #GENERATIONS}. */
    public String resolve(String operationPath) {
        return apiBase + operationPath;
    }

    /** The origin without {@code /v1}, for log lines that tell a user what was tried. */
    public String display() {
        return apiBase.toString();
    }
}
