package io.imageworker.pipeline;

import io.imageworker.testing.StoreProxyTestResource;
import io.imageworker.testing.infra.Infrastructure;
import java.util.HashMap;
import java.util.Map;

/**
 * The worker of {@link HostileCorpusTest}: a request topic of its own with six partitions and a consumer group of its
 * own, the store reached through the recording {@link io.imageworker.testing.StoreProxy}, the default infrastructure
 * patience of two minutes (so that a record retried for it would hold its partition far past the test's bounds), and
 * internal addresses on the {@code https://} host list (so that their refusal can only come from the address rules),
 * and neither of the optional topics (no priority lane, no {@code image.started}: {@link OptionalTopicsOffTest}).
 */
public class HostileCorpusResource extends StoreProxyTestResource {

    /** The request topic of the corpus. */
    static final String TOPIC = "hostile-image-request";

    /** Its partitions. */
    static final int PARTITIONS = 6;

    /** The worker's consumer group. */
    static final String GROUP = "hostile-corpus";

    /** Listed hosts that are internal addresses: listing them must not make them reachable. */
    static final String LISTED_INTERNAL_HOSTS =
            "localhost,127.0.0.1,::1,169.254.169.254,10.0.0.7,metadata.google.internal,0x7f000001,2130706433";

    @Override
    public Map<String, String> start() {
        Map<String, String> config = new HashMap<>(super.start());
        Infrastructure.get().kafka().createTopics(PARTITIONS, TOPIC);
        config.put("image-worker.topic.request", TOPIC);
        config.put("image-worker.consumer-group", GROUP);
        // Without the two optional topics (OptionalTopicsOffTest): no priority lane, no image.started.
        config.remove("image-worker.topic.request-priority");
        config.remove("image-worker.topic.status");
        config.put("image-worker.retry.infrastructure-patience", "2m");
        config.put("image-worker.reference.allowed-hosts", LISTED_INTERNAL_HOSTS);
        return config;
    }
}
