package io.imageworker.testing;

import io.imageworker.api.StatusSettings;
import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.console.ConsoleSettings;
import io.imageworker.gateway.GatewaySettings;
import io.imageworker.messaging.results.TransactionSettings;
import io.imageworker.net.DownloadSettings;
import io.imageworker.processing.CancelSettings;
import io.imageworker.reference.ReferenceSettings;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.storage.StorageSettings;
import io.imageworker.support.LogSettings;
import io.imageworker.support.RetrySettings;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Real settings mappings built from properties, for unit tests of classes that take one: {@link WorkerConfig} and the
 * mapping of each package's own settings ({@link #MAPPINGS}).
 */
public final class TestConfig {

    /**
     * Every {@code @ConfigMapping} of the worker, each under its own prefix: together they are every setting the
     * worker reads ({@code ArchitectureTest} checks that none is missing here; the names' tests enumerate them).
     */
    public static final List<Class<?>> MAPPINGS = List.of(
            WorkerConfig.class,
            TopicSettings.class,
            ConsoleSettings.class,
            RetrySettings.class,
            StorageSettings.class,
            BudgetSettings.class,
            StatusSettings.class,
            TransactionSettings.class,
            GatewaySettings.class,
            CancelSettings.class,
            ReferenceSettings.class,
            DownloadSettings.class,
            LogSettings.class);

    private TestConfig() {}

    /** The prefix of {@code mapping}, from its {@code @ConfigMapping}. */
    public static String prefix(Class<?> mapping) {
        return mapping.getAnnotation(ConfigMapping.class).prefix();
    }

    /**
     * The worker's settings, every mapping of {@link #MAPPINGS} registered, with the defaults, the three required
     * gateway settings, and {@code overrides}.
     */
    public static SmallRyeConfig config(Map<String, String> overrides) {
        Map<String, String> properties = new HashMap<>();
        properties.put("image-worker.gateway.base-url", "http://127.0.0.1:1");
        properties.put("image-worker.gateway.api-key", "sk-test");
        properties.put("image-worker.gateway.model", "gpt-image-2");
        properties.putAll(overrides);
        SmallRyeConfigBuilder builder = new SmallRyeConfigBuilder();
        MAPPINGS.forEach(mapping -> builder.withMapping(mapping));
        return builder
                // Quarkus's own converter, so that "60s" means what it means in application.properties.
                .withConverter(Duration.class, 200, new DurationConverter())
                .withSources(new PropertiesConfigSource(properties, "test", 500))
                .build();
    }

    /** The mapping {@code mapping} with the defaults, the three required gateway settings, and {@code overrides}. */
    public static <T> T settings(Class<T> mapping, Map<String, String> overrides) {
        return config(overrides).getConfigMapping(mapping);
    }

    /** The mapping {@code mapping} with the defaults and the three required gateway settings. */
    public static <T> T settings(Class<T> mapping) {
        return settings(mapping, Map.of());
    }

    /** The {@link WorkerConfig} mapping with the defaults, the three required gateway settings, and {@code overrides}. */
    public static WorkerConfig worker(Map<String, String> overrides) {
        return settings(WorkerConfig.class, overrides);
    }

    /** The {@link WorkerConfig} mapping with the defaults and the three required gateway settings. */
    public static WorkerConfig worker() {
        return worker(Map.of());
    }
}
