package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.config.WorkerConfig;
import io.imageworker.reference.ReferenceSettings;
import io.imageworker.testing.TestConfig;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The three ways to deploy the worker (the Helm chart, the kustomize base in {@code deploy/}, docker-compose.yml) set
 * the same environment: the same names, and the same values wherever the value is not the site's own (brokers,
 * gateway, store, keys).
 */
class EnvironmentParityTest {

    /**
     * Values each deployment fills in for its own site (and the log format: JSON for a cluster's log pipeline, plain
     * lines for a person reading {@code docker compose logs}).
     */
    private static final Set<String> SITE_SPECIFIC = Set.of(
            "IMAGE_WORKER_LOG_JSON",
            "KAFKA_BOOTSTRAP_SERVERS",
            "IMAGE_WORKER_GATEWAY_BASE_URL",
            "IMAGE_WORKER_GATEWAY_MODEL",
            "IMAGE_WORKER_GATEWAY_API_KEY",
            "IMAGE_WORKER_STORAGE_ENDPOINT",
            "AWS_REGION",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY");

    /** The chart with the values deploy/ and compose choose: an S3-compatible endpoint, static keys, one bucket. */
    static Map<String, String> chart() {
        Rendering rendering = HelmChart.render(
                HelmChart.DIRECTORY.resolve("ci/default-values.yaml"),
                Map.of(
                        "storage.endpoint", "http://minio.minio:9000",
                        "storage.region", "us-east-1",
                        "reference.allowedBuckets[0]", "images",
                        "secret.existingSecret", "",
                        "secret.gatewayApiKey", "sk-x",
                        "secret.awsAccessKeyId", "id",
                        "secret.awsSecretAccessKey", "secret"));
        Map<String, String> environment = new TreeMap<>();
        rendering.environment().forEach((name, variable) -> environment.put(name, variable.value()));
        return withoutTheChartsPins(environment);
    }

    /**
     * The chart's environment without the names it writes only so that no {@code envFrom} source it cannot read (the
     * existing Secret, {@code extraEnvFrom}) may set them, once each is shown to mean what leaving it unset means, as in
     * the kustomize base and compose: the other lanes' poll intervals the request channel's (which they follow), the
     * JVM option variables and the profile's parent empty, the profile the packaged worker's own, and each setting
     * under the profile's prefix its plain value.
     */
    static Map<String, String> withoutTheChartsPins(Map<String, String> chart) {
        Map<String, String> rest = new TreeMap<>(chart);
        String poll = chart.get("MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS");
        assertThat(rest.remove("MP_MESSAGING_INCOMING_PRIORITY_REQUESTS_MAX_POLL_INTERVAL_MS"))
                .isEqualTo(poll);
        assertThat(rest.remove("MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS"))
                .isEqualTo(poll);
        for (String empty :
                List.of("JAVA_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "QUARKUS_CONFIG_PROFILE_PARENT")) {
            assertThat(rest.remove(empty)).as(empty).isEmpty();
        }
        assertThat(rest.remove("QUARKUS_PROFILE")).isEqualTo("prod");
        chart.forEach((name, value) -> {
            if (name.startsWith("_PROD_")) {
                assertThat(value).as(name).isEqualTo(chart.get(name.substring("_PROD_".length())));
                rest.remove(name);
            }
        });
        return rest;
    }

    static Map<String, String> kustomizeBase() {
        Map<String, String> environment = new TreeMap<>();
        KustomizeBase.rendering().environment().forEach((name, variable) -> environment.put(name, variable.value()));
        environment.putAll(Rendering.secretValues(KustomizeBase.exampleSecret()));
        return environment;
    }

    static Map<String, String> compose() {
        Map<String, String> environment = new TreeMap<>();
        ComposeFile.read()
                .environment("image-worker")
                .forEach((name, value) -> environment.put(name, ComposeFile.withDefaults(value)));
        return environment;
    }

    @Test
    void theChartTheKustomizeBaseAndComposeSetTheSameNames() {
        Set<String> chart = chart().keySet();

        assertThat(kustomizeBase().keySet()).containsExactlyInAnyOrderElementsOf(chart);
        assertThat(compose().keySet()).containsExactlyInAnyOrderElementsOf(chart);
        assertThat(chart).containsAll(WorkerEnvironment.REQUIRED);
    }

    @Test
    void andTheSameValuesWhereTheSiteDoesNotDecide() {
        Map<String, String> chart = withoutSiteValues(chart());

        assertThat(withoutSiteValues(kustomizeBase())).isEqualTo(chart);
        assertThat(withoutSiteValues(compose())).isEqualTo(chart);
    }

    private static Map<String, String> withoutSiteValues(Map<String, String> environment) {
        Map<String, String> rest = new TreeMap<>(environment);
        rest.keySet().removeAll(SITE_SPECIFIC);
        return rest;
    }

    @Test
    void anEmptyListIsAnUnsetOneToTheWorker() {
        // The chart and deploy/ set IMAGE_WORKER_REFERENCE_ALLOWED_* even when empty: the worker's default must apply.
        SmallRyeConfigBuilder builder = new SmallRyeConfigBuilder();
        TestConfig.MAPPINGS.forEach(mapping -> builder.withMapping(mapping));
        SmallRyeConfig config = builder.withConverter(Duration.class, 100, new DurationConverter())
                .withSources(new EnvConfigSource(
                        Map.of(
                                "IMAGE_WORKER_REFERENCE_ALLOWED_BUCKETS", "",
                                "IMAGE_WORKER_REFERENCE_ALLOWED_HOSTS", "",
                                "IMAGE_WORKER_CONCURRENCY", "8"),
                        300))
                .build();
        WorkerConfig worker = config.getConfigMapping(WorkerConfig.class);
        ReferenceSettings reference = config.getConfigMapping(ReferenceSettings.class);

        assertThat(worker.concurrency()).isEqualTo(8);
        assertThat(reference.allowedBuckets()).isEmpty();
        assertThat(reference.allowedHosts()).isEmpty();
    }
}
