package io.imageworker.pipeline;

import io.imageworker.testing.WorkerTestResource;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The tests' servers and settings for a test of per-producer budgets: request topics (both lanes) and a consumer group
 * of its own (requests left waiting reach no other test's worker, no other test's request reaches it), a budget topic of its own (no other run's claims count), and
 * the test's budget settings.
 */
abstract class ProducerCapResource extends WorkerTestResource {

    private final String topic;
    private final String consumerGroup;
    private final Map<String, String> budgetSettings;

    ProducerCapResource(String topic, String consumerGroup, Map<String, String> budgetSettings) {
        this.topic = topic;
        this.consumerGroup = consumerGroup;
        this.budgetSettings = budgetSettings;
    }

    @Override
    public Map<String, String> start() {
        Map<String, String> config = new HashMap<>(super.start());
        ownLanes(config, consumerGroup, topic);
        config.put("image-worker.topic.budget", "image-worker-budget-" + UUID.randomUUID());
        config.putAll(budgetSettings);
        return config;
    }
}
