package io.imageworker.testing.launch;

import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.Infrastructure;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * What a packaged worker needs around it: a Kafka broker and an S3-compatible store ({@link Infrastructure}), the
 * gateway simulator, the topics and the bucket; and the environment that points a {@link WorkerProcess} at them.
 */
public final class LaunchStack implements AutoCloseable {

    /** The bucket images are stored in. */
    public static final String BUCKET = "images";

    private final Infrastructure infrastructure;
    private final boolean ownsInfrastructure;
    private final GatewaySimulator gateway;
    private final String model;
    private final Topics topics;

    private LaunchStack(
            Infrastructure infrastructure, boolean owns, GatewaySimulator gateway, String model, Topics topics) {
        this.infrastructure = infrastructure;
        this.ownsInfrastructure = owns;
        this.gateway = gateway;
        this.model = model;
        this.topics = topics;
    }

    /**
     * Starts an embedded broker and S3 server with their data under {@code dataDir} (kept), on the given ports (0:
     * free ones), and a simulator; creates the default topics and the bucket.
     */
    public static LaunchStack startEmbedded(Path dataDir, int kafkaPort, int s3Port, SimulatorSettings simulator) {
        Infrastructure infrastructure = Infrastructure.startEmbedded(dataDir, kafkaPort, s3Port);
        return complete(infrastructure, true, simulator, Topics.defaults());
    }

    /**
     * Uses this JVM's shared test servers ({@link Infrastructure#get()}: external, containers or embedded), a new
     * simulator, and topics and a consumer group of their own, so that earlier runs on the same servers do not count.
     */
    public static LaunchStack onSharedServers(SimulatorSettings simulator) {
        return complete(Infrastructure.get(), false, simulator, Topics.unique());
    }

    /**
     * Uses the given servers (not closed with this stack), a new simulator, and topics and a consumer group of their
     * own: one stack per run of a benchmark that starts its servers once.
     */
    public static LaunchStack on(Infrastructure infrastructure, SimulatorSettings simulator) {
        return complete(infrastructure, false, simulator, Topics.unique());
    }

    /** {@link #onSharedServers(SimulatorSettings)}, with a request topic of {@code requestPartitions} partitions. */
    public static LaunchStack onSharedServers(SimulatorSettings simulator, int requestPartitions) {
        Infrastructure infrastructure = Infrastructure.get();
        Topics topics = Topics.unique();
        infrastructure.kafka().createTopics(requestPartitions, topics.request());
        return complete(infrastructure, false, simulator, topics);
    }

    private static LaunchStack complete(
            Infrastructure infrastructure, boolean owns, SimulatorSettings settings, Topics topics) {
        GatewaySimulator gateway = null;
        try {
            gateway = GatewaySimulator.start(settings);
            infrastructure.kafka().createTopics(topics.request(), topics.completed(), topics.failed(), topics.dlq());
            infrastructure.s3().createBucket(BUCKET);
            return new LaunchStack(infrastructure, owns, gateway, settings.model(), topics);
        } catch (RuntimeException e) {
            if (gateway != null) {
                gateway.close();
            }
            if (owns) {
                infrastructure.close();
            }
            throw e;
        }
    }

    public Infrastructure infrastructure() {
        return infrastructure;
    }

    public GatewaySimulator gateway() {
        return gateway;
    }

    public Topics topics() {
        return topics;
    }

    /** Where the store keeps the objects on this machine ({@code <dir>/<bucket>/<key>}), when it is embedded. */
    public Optional<Path> objectPath(String bucket, String key) {
        return infrastructure.s3().localDataDir().map(dir -> dir.resolve(bucket).resolve(key));
    }

    /**
     * The environment of a worker on this stack, by the names of the configuration surface: Kafka, topics (the spend
     * guard's too), group, store, gateway, and {@code IMAGE_WORKER_CONCURRENCY}.
     */
    public Map<String, String> workerEnvironment(int concurrency) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("KAFKA_BOOTSTRAP_SERVERS", infrastructure.kafkaBootstrapServers());
        env.put("IMAGE_WORKER_TOPIC_REQUEST", topics.request());
        env.put("IMAGE_WORKER_TOPIC_COMPLETED", topics.completed());
        env.put("IMAGE_WORKER_TOPIC_FAILED", topics.failed());
        env.put("IMAGE_WORKER_TOPIC_DLQ", topics.dlq());
        env.put("IMAGE_WORKER_TOPIC_BUDGET", topics.budget());
        env.put("IMAGE_WORKER_CONSUMER_GROUP", topics.consumerGroup());
        env.put("IMAGE_WORKER_STORAGE_ENDPOINT", infrastructure.s3Endpoint().toString());
        env.put("IMAGE_WORKER_STORAGE_ACCESS_KEY_ID", infrastructure.s3AccessKey());
        env.put("IMAGE_WORKER_STORAGE_SECRET_ACCESS_KEY", infrastructure.s3SecretKey());
        env.put("IMAGE_WORKER_STORAGE_REGION", infrastructure.s3Region());
        env.put("IMAGE_WORKER_STORAGE_BUCKET", BUCKET);
        env.put("IMAGE_WORKER_STORAGE_CREATE_BUCKET", "true");
        env.put("IMAGE_WORKER_GATEWAY_BASE_URL", gateway.baseUrl());
        env.put("IMAGE_WORKER_GATEWAY_API_KEY", gateway.validApiKey());
        env.put("IMAGE_WORKER_GATEWAY_MODEL", model);
        env.put("IMAGE_WORKER_CONCURRENCY", Integer.toString(concurrency));
        return env;
    }

    /** Ends the simulator, and the servers when this stack started them (their data stays in the data directory). */
    @Override
    public void close() {
        gateway.close();
        if (ownsInfrastructure) {
            infrastructure.close();
        }
    }

    /** Topic names and the worker's consumer group. */
    public record Topics(String request, String completed, String failed, String dlq, String consumerGroup) {

        /** The spend guard's topic, named beside the others (the worker creates it when a cap is set). */
        public String budget() {
            return request().substring(0, request().length() - "image-request".length()) + "image-worker-budget";
        }

        /** The product's default names. */
        public static Topics defaults() {
            return new Topics("image-request", "image-completed", "image-failed", "image-request-dlq", "image-worker");
        }

        /** Names of their own, {@code <prefix>-image-request} and so on. */
        public static Topics unique() {
            String prefix = "launch-" + UUID.randomUUID().toString().substring(0, 8) + "-";
            return new Topics(
                    prefix + "image-request",
                    prefix + "image-completed",
                    prefix + "image-failed",
                    prefix + "image-request-dlq",
                    prefix + "image-worker");
        }
    }
}
