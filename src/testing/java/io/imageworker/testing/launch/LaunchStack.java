package io.imageworker.testing.launch;

import io.imageworker.testing.KafkaOffsets;
import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.Infrastructure;
import io.smallrye.config.common.utils.StringUtil;
import io.smallrye.reactive.messaging.kafka.companion.KafkaCompanion;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.S3AsyncClient;

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
    private final KafkaCompanion kafka;

    private LaunchStack(
            Infrastructure infrastructure, boolean owns, GatewaySimulator gateway, String model, Topics topics) {
        this.infrastructure = infrastructure;
        this.ownsInfrastructure = owns;
        this.gateway = gateway;
        this.model = model;
        this.topics = topics;
        this.kafka = new KafkaCompanion(infrastructure.kafkaBootstrapServers());
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

    /** {@link #onSharedServers(SimulatorSettings)}, with a simulator that answers after {@code latency}, no quota. */
    public static LaunchStack onSharedServers(Latency latency) {
        return onSharedServers(SimulatorSettings.unlimited(latency));
    }

    /** {@link #onSharedServers(SimulatorSettings)}, with a request topic of {@code requestPartitions} partitions. */
    public static LaunchStack onSharedServers(SimulatorSettings simulator, int requestPartitions) {
        return on(Infrastructure.get(), simulator, requestPartitions);
    }

    /** {@link #on(Infrastructure, SimulatorSettings)}, with a request topic of {@code requestPartitions} partitions. */
    public static LaunchStack on(Infrastructure infrastructure, SimulatorSettings simulator, int requestPartitions) {
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

    /** The broker as a client sees it, through the Kafka companion: topics, offsets, consumer groups. */
    public KafkaCompanion kafka() {
        return kafka;
    }

    /** The worker group's committed offsets, partitions without a commit left out. */
    public Map<TopicPartition, OffsetAndMetadata> committed() {
        return KafkaOffsets.committed(kafka, topics.consumerGroup());
    }

    /** Whether the worker group has committed every record of the request topic. */
    public boolean allCommitted() {
        return KafkaOffsets.committedToEnd(kafka, topics.consumerGroup(), topics.request());
    }

    /** The end offsets of the result topics ({@code completed}, {@code failed}): see {@link PipelineClient#caughtUpTo}. */
    public Map<TopicPartition, Long> resultEnds() {
        Map<TopicPartition, Long> ends = new HashMap<>(KafkaOffsets.endOffsets(kafka, topics.completed()));
        ends.putAll(KafkaOffsets.endOffsets(kafka, topics.failed()));
        return ends;
    }

    /** The simulator's image calls of each of these requests (the launch tests end each prompt with its id). */
    public Map<String, List<RecordedCall>> callsByRequest(Collection<String> ids) {
        return PipelineClient.byRequest(gateway.imageCalls(), ids);
    }

    /** An object of the bucket, read back whole. */
    public byte[] readObject(String key) {
        try (S3AsyncClient s3 = infrastructure.s3().newAsyncClient()) {
            return s3.getObject(get -> get.bucket(BUCKET).key(key), AsyncResponseTransformer.toBytes())
                    .join()
                    .asByteArray();
        }
    }

    /** Whether the bucket holds an object {@code key}. */
    public boolean hasObject(String key) {
        try (S3AsyncClient s3 = infrastructure.s3().newAsyncClient()) {
            return s3.headObject(head -> head.bucket(BUCKET).key(key))
                    .handle((found, error) -> error == null)
                    .join();
        }
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
        Map<String, String> settings = new TreeMap<>(infrastructure.workerSettings(BUCKET));
        settings.putAll(gateway.workerSettings(model));
        settings.putAll(Map.of(
                "image-worker.topic.request", topics.request(),
                "image-worker.topic.completed", topics.completed(),
                "image-worker.topic.failed", topics.failed(),
                "image-worker.topic.dlq", topics.dlq(),
                "image-worker.topic.budget", topics.budget(),
                "image-worker.consumer-group", topics.consumerGroup(),
                "image-worker.concurrency", Integer.toString(concurrency)));
        Map<String, String> env = new LinkedHashMap<>();
        // The environment variable of each, as SmallRye Config maps it: IMAGE_WORKER_STORAGE_ACCESS_KEY_ID.
        settings.forEach((name, value) ->
                env.put(StringUtil.replaceNonAlphanumericByUnderscores(name).toUpperCase(Locale.ROOT), value));
        return env;
    }

    /**
     * A packaged worker on this stack, {@code name} in its log, with the environment of
     * {@link #workerEnvironment(int)}; the caller adds its own settings and builds it. Its JVM compiles with C1 only
     * ({@link #QUICK_START}).
     */
    public WorkerProcess.Builder worker(String name, int concurrency) {
        return WorkerProcess.builder()
                .name(name)
                .env(workerEnvironment(concurrency))
                .jvmOptions(QUICK_START);
    }

    /**
     * The JVM options of the tests' workers: C1 only, as the test servers' JVMs ({@code ChildJvm}). A worker of a test
     * lives for seconds, most of which is its start; C2 compiling on the same two cores makes the start take about a
     * third longer and does not pay back in that time. The benchmark and the local run start their workers without it.
     */
    public static final List<String> QUICK_START = List.of("-XX:TieredStopAtLevel=1");

    /** Ends the simulator, and the servers when this stack started them (their data stays in the data directory). */
    @Override
    public void close() {
        kafka.close();
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
