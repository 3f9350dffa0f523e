package io.imageworker.config;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/** The configuration of a Kafka client the worker creates itself, from the application's {@code kafka.*} settings. */
public final class KafkaClientConfig {

    private KafkaClientConfig() {}

    /**
     * The application's Kafka settings ({@code kafka} is Quarkus' {@code default-kafka-broker} map: bootstrap servers,
     * security, SASL...) that a client of this kind knows ({@code known}, e.g. {@code ProducerConfig.configNames()}),
     * with the client's {@code own} settings on top.
     */
    public static Map<String, Object> of(Map<String, Object> kafka, Set<String> known, Map<String, Object> own) {
        Map<String, Object> config = new HashMap<>();
        kafka.forEach((key, value) -> {
            if (known.contains(key)) {
                config.put(key, value);
            }
        });
        config.putAll(own);
        return config;
    }
}
