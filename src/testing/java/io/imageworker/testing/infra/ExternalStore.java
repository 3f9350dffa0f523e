package io.imageworker.testing.infra;

import java.net.URI;

/** An S3-compatible store that was already running ({@code IMAGE_WORKER_STORAGE_ENDPOINT}); the tests only use it. */
record ExternalStore(URI endpoint, String accessKey, String secretKey, String region)
        implements ManagedStore, ExternalServer {

    @Override
    public String description() {
        return "external store at " + endpoint + " (IMAGE_WORKER_STORAGE_ENDPOINT)";
    }
}
