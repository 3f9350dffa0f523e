package io.imageworker.testing.infra;

/** A Kafka cluster that was already running ({@code KAFKA_BOOTSTRAP_SERVERS}); the tests only use it. */
final class ExternalKafka implements ManagedKafka {

    private final String bootstrapServers;

    ExternalKafka(String bootstrapServers) {
        this.bootstrapServers = bootstrapServers;
    }

    @Override
    public ServerMode mode() {
        return ServerMode.EXTERNAL;
    }

    @Override
    public String bootstrapServers() {
        return bootstrapServers;
    }

    @Override
    public int partitions() {
        return KafkaBroker.DEFAULT_PARTITIONS;
    }

    @Override
    public boolean supportsRestart() {
        return false;
    }

    @Override
    public void stop() {
        throw unsupported();
    }

    @Override
    public void start() {
        throw unsupported();
    }

    @Override
    public void kill() {
        throw unsupported();
    }

    private UnsupportedOperationException unsupported() {
        return new UnsupportedOperationException("Kafka at " + bootstrapServers
                + " is an external server (KAFKA_BOOTSTRAP_SERVERS): tests cannot stop or start it."
                + " Unset KAFKA_BOOTSTRAP_SERVERS to run the tests against a broker they own.");
    }
}
