package io.imageworker.testing.infra;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.kafka.common.Uuid;

/**
 * A real single-node Kafka cluster (KRaft, broker and controller in one process) in its own JVM, on loopback ports
 * that stay the same across {@link #stop()}/{@link #start()}, with its data in one directory. Start with
 * {@link #start()}; {@link #close()} ends it and deletes the data of a {@link #temporary()} broker.
 */
public final class KafkaBroker extends EmbeddedServer implements ManagedKafka {

    /** Partitions of a new topic unless stated otherwise. */
    public static final int DEFAULT_PARTITIONS = 4;

    /** A bound for a broker that will not come up, not a wait: as {@code S3Server}'s (95 s seen on a loaded machine). */
    private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

    private final int controllerPort;
    private final int partitions;
    private Path serverProperties;

    private KafkaBroker(Path dataDir, boolean temporary, int port, int partitions) {
        super("kafka", "Kafka broker", "kafka.Kafka", "384m", dataDir, temporary, port);
        int controller = ChildProcess.freePort();
        while (controller == port()) {
            controller = ChildProcess.freePort();
        }
        this.controllerPort = controller;
        this.partitions = partitions;
    }

    /** A broker with {@value #DEFAULT_PARTITIONS} partitions per topic, free ports and data deleted on close. */
    public static KafkaBroker temporary() {
        return temporary(DEFAULT_PARTITIONS);
    }

    /** A broker with {@code partitions} partitions per topic, free ports and data deleted on close. */
    public static KafkaBroker temporary(int partitions) {
        return new KafkaBroker(BuildPaths.temporaryDirectory("image-worker-kafka"), true, 0, partitions);
    }

    /**
     * A broker whose data lives in {@code dataDir} and outlives it (a local run keeps its topics across runs).
     *
     * @param port the client port, or 0 for a free one
     */
    public static KafkaBroker persistent(Path dataDir, int port) {
        return new KafkaBroker(dataDir.toAbsolutePath(), false, port, DEFAULT_PARTITIONS);
    }

    @Override
    public String bootstrapServers() {
        return ChildProcess.HOST + ":" + port();
    }

    @Override
    public int partitions() {
        return partitions;
    }

    @Override
    public String description() {
        return "embedded broker in its own JVM at " + bootstrapServers();
    }

    @Override
    String address() {
        return bootstrapServers();
    }

    @Override
    void awaitReady(BooleanSupplier alive, Supplier<String> diagnostics) {
        KafkaAdmin.awaitReady(bootstrapServers(), START_TIMEOUT, alive, diagnostics);
    }

    /**
     * Writes the cluster's identity into an empty data directory, as {@code kafka-storage.sh format} does, in the
     * broker's own JVM just before it starts (a JVM of its own was half the broker's start). A static quorum
     * (controller.quorum.voters) is formatted without --standalone / --initial-controllers; those two are for a
     * dynamic quorum (controller.quorum.bootstrap.servers).
     */
    @Override
    void beforeStart(ChildJvm server) {
        if (!dataDir.resolve("meta.properties").toFile().exists()) {
            server.runFirst(
                    "kafka.tools.StorageTool",
                    List.of(
                            "format",
                            "--cluster-id",
                            Uuid.randomUuid().toString(),
                            "--config",
                            serverProperties.toString()));
        }
    }

    @Override
    List<String> arguments(Path configDir) {
        String host = ChildProcess.HOST;
        serverProperties = writeProperties(
                configDir,
                "server.properties",
                """
                process.roles=broker,controller
                node.id=1
                controller.quorum.voters=1@%2$s:%4$d
                listeners=PLAINTEXT://%2$s:%3$d,CONTROLLER://%2$s:%4$d
                advertised.listeners=PLAINTEXT://%2$s:%3$d
                listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
                controller.listener.names=CONTROLLER
                inter.broker.listener.name=PLAINTEXT
                log.dirs=%1$s
                num.partitions=%5$d
                auto.create.topics.enable=true
                # One node: every internal topic has one replica.
                offsets.topic.replication.factor=1
                transaction.state.log.replication.factor=1
                transaction.state.log.min.isr=1
                share.coordinator.state.topic.replication.factor=1
                share.coordinator.state.topic.min.isr=1
                # Fewer internal partitions than the default 50: created in a fraction of the time on first use.
                offsets.topic.num.partitions=5
                transaction.state.log.num.partitions=5
                # A consumer gets its partitions at once instead of after 3 s.
                group.initial.rebalance.delay.ms=0
                # After a kill the controller refuses the restarted broker until the dead one's session expires (9 s
                # by default): a shorter session makes a crash-restart take seconds.
                broker.heartbeat.interval.ms=500
                broker.session.timeout.ms=3000
                # The log cleaner's 128 MB default buffer does not fit the small heap.
                log.cleaner.dedupe.buffer.size=16777216
                """
                        .formatted(dataDir.toString().replace('\\', '/'), host, port(), controllerPort, partitions));
        return List.of(serverProperties.toString());
    }
}
