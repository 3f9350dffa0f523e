package io.imageworker.testing.infra;

/**
 * A Kafka cluster for tests, whichever way it runs ({@link #mode()}). Tests use {@link #bootstrapServers()} and do
 * not care about the mode; fault tests first check {@link #supportsRestart()}.
 */
public interface ManagedKafka {

    /** How this cluster is provided. */
    ServerMode mode();

    /** The {@code bootstrap.servers} value, {@code host:port}. */
    String bootstrapServers();

    /** Partitions of a topic created by {@link #createTopics(String...)} or auto-created on first use. */
    int partitions();

    /** Creates each named topic that does not exist yet, with {@link #partitions()} partitions and one replica. */
    default void createTopics(String... names) {
        KafkaAdmin.createTopics(bootstrapServers(), partitions(), names);
    }

    /** Creates each named topic that does not exist yet, with {@code partitions} partitions and one replica. */
    default void createTopics(int partitions, String... names) {
        KafkaAdmin.createTopics(bootstrapServers(), partitions, names);
    }

    /** Whether {@link #stop()}, {@link #start()}, {@link #restart()} and {@link #kill()} work in this mode. */
    default boolean supportsRestart() {
        return true;
    }

    /**
     * Stops the broker gracefully (SIGTERM) and returns once it is down; records and committed offsets stay.
     *
     * @throws UnsupportedOperationException when {@link #supportsRestart()} is false
     */
    void stop();

    /**
     * Starts the broker again on the same address and data, and returns once it answers. Does nothing when it runs.
     *
     * @throws UnsupportedOperationException when {@link #supportsRestart()} is false
     */
    void start();

    /** {@link #stop()} then {@link #start()}. */
    default void restart() {
        stop();
        start();
    }

    /**
     * Kills the broker at once (SIGKILL), without a clean shutdown; {@link #start()} brings it back.
     *
     * @throws UnsupportedOperationException when {@link #supportsRestart()} is false
     */
    void kill();
}
