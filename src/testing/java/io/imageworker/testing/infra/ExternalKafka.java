package io.imageworker.testing.infra;

/** A Kafka cluster that was already running ({@code KAFKA_BOOTSTRAP_SERVERS}); the tests only use it. */
record ExternalKafka(String bootstrapServers) implements ManagedKafka, ExternalServer {

    @Override
    public int partitions() {
        return KafkaBroker.DEFAULT_PARTITIONS;
    }

    @Override
    public String description() {
        return "external broker at " + bootstrapServers + " (KAFKA_BOOTSTRAP_SERVERS)";
    }
}
