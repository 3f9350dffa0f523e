package io.imageworker.testing.infra;

import java.time.Duration;
import java.util.function.Supplier;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/** Kafka in a Testcontainers container ({@code apache/kafka}, the version of the Kafka client). */
final class ContainerKafka extends ContainerServer<KafkaContainer> implements ManagedKafka {

    /** The broker image: the same Kafka version as the client library. */
    static final String IMAGE = "apache/kafka:4.1.1";

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final int partitions;

    ContainerKafka(int partitions) {
        super(
                new KafkaContainer(DockerImageName.parse(IMAGE))
                        .withEnv("KAFKA_NUM_PARTITIONS", Integer.toString(partitions))
                        .withEnv("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "true")
                        .withEnv("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0"),
                9092);
        this.partitions = partitions;
    }

    @Override
    public String bootstrapServers() {
        return container.getBootstrapServers();
    }

    @Override
    public int partitions() {
        return partitions;
    }

    @Override
    String address() {
        return bootstrapServers();
    }

    @Override
    void awaitReady(Supplier<String> diagnostics) {
        KafkaAdmin.awaitReady(bootstrapServers(), START_TIMEOUT, () -> true, diagnostics);
    }
}
