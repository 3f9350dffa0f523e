package io.imageworker.deploy;

import io.imageworker.config.WorkerConfig;
import io.imageworker.testing.TestConfig;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.ConfigMappings;
import io.smallrye.config.common.utils.StringUtil;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** The environment variables the packaged worker reads: its own settings and the few of its libraries and image. */
final class WorkerEnvironment {

    /**
     * Read by something other than {@link WorkerConfig}: the Kafka client (through Quarkus), the AWS SDK's default
     * chain, Quarkus' HTTP server, profile and OpenTelemetry, the request channels' Kafka consumers (SmallRye Reactive
     * Messaging), the base image's {@code run-java.sh}, and the JVM and its launcher.
     */
    static final Set<String> OUTSIDE_WORKER_CONFIG = Set.of(
            "KAFKA_BOOTSTRAP_SERVERS",
            "MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS",
            "MP_MESSAGING_INCOMING_PRIORITY_REQUESTS_MAX_POLL_INTERVAL_MS",
            "MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS",
            "QUARKUS_PROFILE",
            "QUARKUS_CONFIG_PROFILE_PARENT",
            "JAVA_OPTS",
            "JAVA_TOOL_OPTIONS",
            "JDK_JAVA_OPTIONS",
            "AWS_REGION",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "QUARKUS_HTTP_PORT",
            "QUARKUS_OTEL_SDK_DISABLED",
            "QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT",
            "QUARKUS_OTEL_TRACES_SAMPLER",
            "QUARKUS_OTEL_TRACES_SAMPLER_ARG",
            "JAVA_MAX_MEM_RATIO",
            "JAVA_OPTS_APPEND");

    /** Settings a deployment must give, because the worker cannot guess them. */
    static final Set<String> REQUIRED = Set.of(
            "KAFKA_BOOTSTRAP_SERVERS",
            "IMAGE_WORKER_GATEWAY_BASE_URL",
            "IMAGE_WORKER_GATEWAY_API_KEY",
            "IMAGE_WORKER_GATEWAY_MODEL");

    /** Secrets: never in a ConfigMap, a compose file default, or a literal {@code env} value. */
    static final Set<String> SECRETS = Set.of("IMAGE_WORKER_GATEWAY_API_KEY", "AWS_SECRET_ACCESS_KEY");

    private WorkerEnvironment() {}

    /**
     * Every environment variable of the worker's settings ({@link WorkerConfig} and each package's own mapping, {@link
     * TestConfig#MAPPINGS}), as SmallRye Config names them.
     */
    static Set<String> workerConfigNames() {
        return TestConfig.MAPPINGS.stream()
                .flatMap(mapping -> ConfigMappings.getProperties(
                        ConfigMappings.ConfigClass.configClass(mapping, TestConfig.prefix(mapping)))
                        .keySet()
                        .stream())
                .map(property -> environmentName(property.replace("[*]", "")))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Every name the packaged worker reads. */
    static Set<String> known() {
        Set<String> names = workerConfigNames();
        names.addAll(OUTSIDE_WORKER_CONFIG);
        return names;
    }

    /**
     * Whether the packaged worker reads {@code name}: a known name, or one under a profile's prefix ({@code
     * _PROD_IMAGE_WORKER_SHUTDOWN_GRACE} is {@code %prod.image-worker.shutdown-grace}).
     */
    static boolean reads(String name) {
        Set<String> known = known();
        if (known.contains(name)) {
            return true;
        }
        for (int cut = name.indexOf('_', 1); name.startsWith("_") && cut > 0; cut = name.indexOf('_', cut + 1)) {
            if (known.contains(name.substring(cut + 1))) {
                return true;
            }
        }
        return false;
    }

    /** {@code image-worker.gateway.base-url} is {@code IMAGE_WORKER_GATEWAY_BASE_URL}. */
    static String environmentName(String property) {
        return StringUtil.replaceNonAlphanumericByUnderscores(property).toUpperCase(Locale.ROOT);
    }

    /** A duration as the worker reads it ({@code 60s}, {@code 2m}, {@code 500ms}, ISO-8601): Quarkus' own converter. */
    static Duration duration(String value) {
        return DurationConverter.parseDuration(value);
    }
}
