package io.imageworker.testing;

import java.net.URI;
import java.util.HashMap;
import java.util.Map;

/**
 * {@link WorkerTestResource}, with the worker's storage reached through the shared {@link StoreProxy}, and a short
 * infrastructure patience (2 s), so that a store made unreachable for some keys fails a request within seconds.
 */
public class StoreProxyTestResource extends WorkerTestResource {

    /** How long the worker retries a store that cannot be reached, in this resource. */
    public static final String PATIENCE = "2s";

    @Override
    public Map<String, String> start() {
        Map<String, String> config = new HashMap<>(super.start());
        StoreProxy proxy = StoreProxy.shared(URI.create(config.get("image-worker.storage.endpoint")));
        config.put("image-worker.storage.endpoint", proxy.endpoint());
        config.put("image-worker.retry.infrastructure-patience", PATIENCE);
        return config;
    }
}
