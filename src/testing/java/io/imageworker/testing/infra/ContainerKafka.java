package io.imageworker.testing.infra;

import java.time.Duration;
import java.util.List;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Kafka in a Testcontainers container ({@code apache/kafka}, the version of the Kafka client). The host port is
 * fixed when the container is created, so that a Docker stop/start keeps the address the broker advertises; the
 * data stays in the container between the two.
 */
final class ContainerKafka implements ManagedKafka, AutoCloseable {

    /** The broker image: the same Kafka version as the client library. */
    static final String IMAGE = "apache/kafka:4.1.1";

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final KafkaContainer container;
    private final int partitions;

    ContainerKafka(int partitions) {
        this.partitions = partitions;
        this.container = new KafkaContainer(DockerImageName.parse(IMAGE))
                .withEnv("KAFKA_NUM_PARTITIONS", Integer.toString(partitions))
                .withEnv("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "true")
                .withEnv("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0");
        // A fixed host port (free here when chosen): Docker keeps it across stop/start, and the advertised listener
        // written into the container at its first start stays right.
        container.setPortBindings(List.of(ChildJvm.freePort() + ":9092"));
        container.start();
    }

    @Override
    public ServerMode mode() {
        return ServerMode.CONTAINER;
    }

    @Override
    public String bootstrapServers() {
        return container.getBootstrapServers();
    }

    @Override
    public int partitions() {
        return partitions;
    }

    /** {@code docker stop}: SIGTERM, SIGKILL after 10 s. The container and its data stay. */
    @Override
    public synchronized void stop() {
        if (!isRunning()) {
            return;
        }
        container
                .getDockerClient()
                .stopContainerCmd(container.getContainerId())
                .withTimeout(10)
                .exec();
    }

    /** {@code docker start} of the same container, then waits until the broker answers. */
    @Override
    public synchronized void start() {
        if (isRunning()) {
            return;
        }
        container
                .getDockerClient()
                .startContainerCmd(container.getContainerId())
                .exec();
        KafkaAdmin.awaitReady(
                bootstrapServers(), START_TIMEOUT, () -> true, () -> "; container log:\n" + container.getLogs());
    }

    /** {@code docker kill}. */
    @Override
    public synchronized void kill() {
        if (!isRunning()) {
            return;
        }
        container.getDockerClient().killContainerCmd(container.getContainerId()).exec();
    }

    private boolean isRunning() {
        Boolean running = container
                .getDockerClient()
                .inspectContainerCmd(container.getContainerId())
                .exec()
                .getState()
                .getRunning();
        return Boolean.TRUE.equals(running);
    }

    /** Removes the container. */
    @Override
    public void close() {
        container.stop();
    }
}
