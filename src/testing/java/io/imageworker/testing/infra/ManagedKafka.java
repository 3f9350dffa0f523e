package io.imageworker.testing.infra;

/** A Kafka cluster for tests, whichever way it runs. */
public interface ManagedKafka extends ManagedServer {

    /** The {@code bootstrap.servers} value, {@code host:port}. */
    String bootstrapServers();

    /** Partitions of a topic created by {@link #createTopics(String...)} or auto-created on first use. */
    int partitions();

    /** Creates each named topic that does not exist yet, with {@link #partitions()} partitions and one replica. */
    default void createTopics(String... names) {
        createTopics(partitions(), names);
    }

    /** Creates each named topic that does not exist yet, with {@code partitions} partitions and one replica. */
    default void createTopics(int partitions, String... names) {
        KafkaAdmin.createTopics(bootstrapServers(), partitions, names);
    }
}
