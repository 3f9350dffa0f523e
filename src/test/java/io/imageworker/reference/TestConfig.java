package io.imageworker.reference;

import io.imageworker.config.WorkerConfig;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** A {@link WorkerConfig} read as Quarkus reads it, from the given properties and the defaults, without booting. */
final class TestConfig {

    private TestConfig() {}

    /**
     * @param allowedHosts the value of {@code image-worker.reference.allowed-hosts}, or null to leave it unset
     * @param downloadTimeout the value of {@code image-worker.download.timeout}, such as {@code 2s}
     */
    static WorkerConfig worker(String allowedHosts, String downloadTimeout) {
        Map<String, String> properties = new HashMap<>();
        if (allowedHosts != null) {
            properties.put("image-worker.reference.allowed-hosts", allowedHosts);
        }
        properties.put("image-worker.download.timeout", downloadTimeout);
        SmallRyeConfig config = new SmallRyeConfigBuilder()
                .withMapping(WorkerConfig.class)
                // Quarkus reads "5s" and "500ms" as durations; plain SmallRye Config only knows ISO-8601.
                .withConverter(Duration.class, 200, new DurationConverter())
                .withSources(new PropertiesConfigSource(properties, "test", 500))
                .build();
        return config.getConfigMapping(WorkerConfig.class);
    }
}
