package io.imageworker.testing.infra;

import java.net.URI;

/** An S3-compatible store that was already running ({@code IMAGE_WORKER_STORAGE_ENDPOINT}); the tests only use it. */
final class ExternalStore implements ManagedStore {

    private final URI endpoint;
    private final String accessKey;
    private final String secretKey;
    private final String region;

    ExternalStore(URI endpoint, String accessKey, String secretKey, String region) {
        this.endpoint = endpoint;
        this.accessKey = accessKey;
        this.secretKey = secretKey;
        this.region = region;
    }

    @Override
    public ServerMode mode() {
        return ServerMode.EXTERNAL;
    }

    @Override
    public URI endpoint() {
        return endpoint;
    }

    @Override
    public String accessKey() {
        return accessKey;
    }

    @Override
    public String secretKey() {
        return secretKey;
    }

    @Override
    public String region() {
        return region;
    }

    @Override
    public boolean supportsRestart() {
        return false;
    }

    @Override
    public void stop() {
        throw unsupported();
    }

    @Override
    public void start() {
        throw unsupported();
    }

    private UnsupportedOperationException unsupported() {
        return new UnsupportedOperationException("The S3 store at " + endpoint
                + " is an external server (IMAGE_WORKER_STORAGE_ENDPOINT): tests cannot stop or start it."
                + " Unset IMAGE_WORKER_STORAGE_ENDPOINT to run the tests against a store they own.");
    }
}
