package io.imageworker.testing;

import io.imageworker.config.WorkerConfig;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** A real {@link WorkerConfig} mapping built from properties, for unit tests of classes that take one. */
public final class TestConfig {

    private TestConfig() {}

    /** The mapping with the defaults, the three required gateway settings, and {@code overrides}. */
    public static WorkerConfig worker(Map<String, String> overrides) {
        Map<String, String> properties = new HashMap<>();
        properties.put("image-worker.gateway.base-url", "http://127.0.0.1:1");
        properties.put("image-worker.gateway.api-key", "sk-test");
        properties.put("image-worker.gateway.model", "gpt-image-2");
        properties.putAll(overrides);
        SmallRyeConfig config = new SmallRyeConfigBuilder()
                .withMapping(WorkerConfig.class)
                // Quarkus's own converter, so that "60s" means what it means in application.properties.
                .withConverter(Duration.class, 200, new DurationConverter())
                .withSources(new PropertiesConfigSource(properties, "test", 500))
                .build();
        return config.getConfigMapping(WorkerConfig.class);
    }

    /** The mapping with the defaults and the three required gateway settings. */
    public static WorkerConfig worker() {
        return worker(Map.of());
    }
}
