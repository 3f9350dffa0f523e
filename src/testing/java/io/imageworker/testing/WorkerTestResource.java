package io.imageworker.testing;

import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.Infrastructure;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Connects a {@code @QuarkusTest} worker to the real servers of this test run: the Kafka broker and S3 store owned
 * by {@link Infrastructure} (embedded child JVMs, Testcontainers, or running servers) and one shared gateway
 * simulator. Timeouts are shortened so failure paths run in seconds.
 */
public class WorkerTestResource implements QuarkusTestResourceLifecycleManager {

    /** The bucket tests write to. */
    public static final String BUCKET = "images";

    /** Topics of this test run. */
    public static final String REQUESTS = "image-request";

    /** The priority lane's topic: the lane is on in every worker of the tests. */
    public static final String PRIORITY_REQUESTS = "image-request-priority";

    /** Where {@code image.started} events go: on in every worker of the tests. */
    public static final String STATUS = "image-status";

    /** The model the simulator knows. */
    public static final String MODEL = "gpt-image-2";

    private static GatewaySimulator simulator;

    /** The simulator every worker of this JVM calls. */
    public static synchronized GatewaySimulator simulator() {
        if (simulator == null) {
            simulator = GatewaySimulator.start(
                    SimulatorSettings.defaults().withModel(MODEL).withLatency(Latency.fixed(Duration.ofMillis(50))));
            Runtime.getRuntime().addShutdownHook(new Thread(simulator::close, "gateway-simulator-stop"));
        }
        return simulator;
    }

    @Override
    public Map<String, String> start() {
        Infrastructure infra = Infrastructure.get();
        GatewaySimulator gateway = simulator();
        infra.kafka()
                .createTopics(
                        REQUESTS, PRIORITY_REQUESTS, "image-completed", "image-failed", "image-request-dlq", STATUS);
        Map<String, String> config = new HashMap<>(infra.workerSettings(BUCKET));
        config.putAll(gateway.workerSettings(MODEL));
        config.put("image-worker.topic.request-priority", PRIORITY_REQUESTS);
        config.put("image-worker.topic.status", STATUS);
        config.put("image-worker.gateway.timeout", "4s");
        config.put("image-worker.gateway.probe-interval", "300ms");
        config.put("image-worker.download.timeout", "2s");
        config.put("image-worker.concurrency", "4");
        config.put("image-worker.retry.initial-backoff", "50ms");
        config.put("image-worker.retry.max-backoff", "500ms");
        config.put("image-worker.retry.infrastructure-patience", "15s");
        return config;
    }

    /**
     * Gives a worker of its own (a consumer group of its own) its own lanes: {@code requestTopic} and {@code
     * <requestTopic>-priority}, both created. A group of its own on the shared priority topic would read it from its
     * start, every other test's priority requests: each replayed, and while they wait the normal lane's requests get
     * only the priority lane's least share (a status read 0.2 where 1.0 was asked, seen once in a whole run).
     */
    protected static void ownLanes(Map<String, String> config, String consumerGroup, String requestTopic) {
        String priority = requestTopic + "-priority";
        Infrastructure.get().kafka().createTopics(requestTopic, priority);
        config.put("image-worker.consumer-group", consumerGroup);
        config.put("image-worker.topic.request", requestTopic);
        config.put("image-worker.topic.request-priority", priority);
    }

    @Override
    public void stop() {
        // The servers and the simulator live for the whole test run; Infrastructure and the hook above stop them.
    }
}
