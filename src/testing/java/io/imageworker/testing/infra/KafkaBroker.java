package io.imageworker.testing.infra;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.Uuid;
import org.jboss.logging.Logger;

/**
 * A real single-node Kafka cluster (KRaft, broker and controller in one process) in its own JVM, on loopback ports
 * that stay the same across {@link #stop()}/{@link #start()}, with its data in one directory. Start with
 * {@link #start()}; {@link #close()} ends it and deletes the data of a {@link #temporary()} broker.
 */
public final class KafkaBroker implements ManagedKafka, AutoCloseable {

    /** Partitions of a new topic unless stated otherwise. */
    public static final int DEFAULT_PARTITIONS = 4;

    private static final Logger LOG = Logger.getLogger(KafkaBroker.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration FORMAT_TIMEOUT = Duration.ofSeconds(60);

    private final Path dataDir;
    private final Path configDir;
    private final boolean temporary;
    private final int port;
    private final int controllerPort;
    private final int partitions;
    private final ChildJvm jvm;
    private boolean logAnnounced;

    private KafkaBroker(Path dataDir, boolean temporary, int port, int partitions) {
        this.dataDir = dataDir;
        this.temporary = temporary;
        this.port = port == 0 ? ChildJvm.freePort() : port;
        int controller = ChildJvm.freePort();
        while (controller == this.port) {
            controller = ChildJvm.freePort();
        }
        this.controllerPort = controller;
        this.partitions = partitions;
        try {
            Files.createDirectories(dataDir);
            this.configDir = Files.createTempDirectory("image-worker-kafka-config");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path serverProperties = writeServerProperties();
        Path logFile = ChildJvm.logDir().resolve("kafka-" + this.port + ".log");
        try {
            Files.deleteIfExists(logFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.jvm = new ChildJvm(
                "kafka",
                ChildJvm.serverJvmOptions("384m", ChildJvm.writeLogbackConfig(configDir)),
                "kafka.Kafka",
                List.of(serverProperties.toString()),
                logFile);
    }

    /** A broker with {@value #DEFAULT_PARTITIONS} partitions per topic, free ports and data deleted on close. */
    public static KafkaBroker temporary() {
        return temporary(DEFAULT_PARTITIONS);
    }

    /** A broker with {@code partitions} partitions per topic, free ports and data deleted on close. */
    public static KafkaBroker temporary(int partitions) {
        try {
            return new KafkaBroker(Files.createTempDirectory("image-worker-kafka"), true, 0, partitions);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
    public ServerMode mode() {
        return ServerMode.EMBEDDED;
    }

    /**
     * Starts the broker (formatting its data directory the first time) and returns once it describes its cluster.
     * Does nothing when it runs.
     *
     * @throws IllegalStateException when it does not come up; the message quotes the end of its log
     */
    @Override
    public synchronized void start() {
        if (jvm.isAlive()) {
            return;
        }
        long started = System.nanoTime();
        if (!logAnnounced) {
            LOG.infof("Kafka broker log: %s", jvm.logFile());
            logAnnounced = true;
        }
        if (!Files.exists(dataDir.resolve("meta.properties"))) {
            format();
        }
        jvm.start();
        KafkaAdmin.awaitReady(bootstrapServers(), START_TIMEOUT, jvm::isAlive, jvm::describeLog);
        LOG.infof(
                "Kafka broker ready at %s after %d ms", bootstrapServers(), (System.nanoTime() - started) / 1_000_000);
    }

    /** Writes the cluster's identity into the empty data directory, as {@code kafka-storage.sh format} does. */
    private void format() {
        // A static quorum (controller.quorum.voters) is formatted without --standalone / --initial-controllers;
        // those two are for a dynamic quorum (controller.quorum.bootstrap.servers).
        jvm.runToCompletion(
                "kafka.tools.StorageTool",
                List.of(
                        "format",
                        "--cluster-id",
                        Uuid.randomUuid().toString(),
                        "--config",
                        configDir.resolve("server.properties").toString()),
                FORMAT_TIMEOUT);
    }

    /** Stops the broker gracefully (SIGTERM) and waits for it to exit; data and ports stay for {@link #start()}. */
    @Override
    public synchronized void stop() {
        jvm.stop();
    }

    /** Kills the broker (SIGKILL); {@link #start()} recovers its logs as after a crash. */
    @Override
    public synchronized void kill() {
        jvm.kill();
    }

    /** Whether the broker process runs. */
    public boolean isRunning() {
        return jvm.isAlive();
    }

    @Override
    public String bootstrapServers() {
        return ChildJvm.HOST + ":" + port;
    }

    /** The client port. */
    public int port() {
        return port;
    }

    @Override
    public int partitions() {
        return partitions;
    }

    /** The broker's data ({@code log.dirs}). */
    public Path dataDir() {
        return dataDir;
    }

    /** The broker's log file, under {@code target/infra-logs/}. */
    public Path logFile() {
        return jvm.logFile();
    }

    /**
     * Ends the broker: a temporary one is killed and its data deleted, a persistent one is stopped gracefully and its
     * data kept.
     */
    @Override
    public synchronized void close() {
        if (temporary) {
            jvm.kill();
            ChildJvm.deleteTree(dataDir);
        } else {
            jvm.stop();
        }
        ChildJvm.deleteTree(configDir);
    }

    private Path writeServerProperties() {
        Properties config = new Properties();
        config.setProperty("process.roles", "broker,controller");
        config.setProperty("node.id", "1");
        config.setProperty("controller.quorum.voters", "1@" + ChildJvm.HOST + ":" + controllerPort);
        config.setProperty(
                "listeners",
                "PLAINTEXT://" + ChildJvm.HOST + ":" + port + ",CONTROLLER://" + ChildJvm.HOST + ":" + controllerPort);
        config.setProperty("advertised.listeners", "PLAINTEXT://" + ChildJvm.HOST + ":" + port);
        config.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        config.setProperty("controller.listener.names", "CONTROLLER");
        config.setProperty("inter.broker.listener.name", "PLAINTEXT");
        config.setProperty("log.dirs", dataDir.toString());
        config.setProperty("num.partitions", Integer.toString(partitions));
        config.setProperty("auto.create.topics.enable", "true");
        // One node: every internal topic has one replica.
        config.setProperty("offsets.topic.replication.factor", "1");
        config.setProperty("transaction.state.log.replication.factor", "1");
        config.setProperty("transaction.state.log.min.isr", "1");
        config.setProperty("share.coordinator.state.topic.replication.factor", "1");
        config.setProperty("share.coordinator.state.topic.min.isr", "1");
        // Fewer internal partitions than the default 50: created in a fraction of the time on first use.
        config.setProperty("offsets.topic.num.partitions", "5");
        config.setProperty("transaction.state.log.num.partitions", "5");
        // A consumer gets its partitions at once instead of after 3 s.
        config.setProperty("group.initial.rebalance.delay.ms", "0");
        // After a kill the controller refuses the restarted broker until the dead one's session expires (9 s by
        // default): a shorter session makes a crash-restart take seconds.
        config.setProperty("broker.heartbeat.interval.ms", "500");
        config.setProperty("broker.session.timeout.ms", "3000");
        // The log cleaner's 128 MB default buffer does not fit the small heap.
        config.setProperty("log.cleaner.dedupe.buffer.size", Integer.toString(16 * 1024 * 1024));
        Path file = configDir.resolve("server.properties");
        try (var out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            config.store(out, "image-worker test broker");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }
}
