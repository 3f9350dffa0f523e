package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.imageworker.support.RetrySettings;
import io.imageworker.testing.TestConfig;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The chart's guards on the settings that decide whether a gateway call is paid twice (the gateway timeout, the
 * infrastructure patience, the shutdown grace, the rebalance grace, Kafka's poll interval) hold whatever the source of
 * a setting: the chart's values, {@code extraEnv}, an {@code extraEnvFrom} ConfigMap or Secret, the Secret named by
 * {@code secret.existingSecret}, or a {@code -D} option in {@code jvm.extraOpts}. What the guards checked is what the
 * pod runs with, and what NOTES prints.
 */
class HelmChartGuardsTest {

    private static final Path DEFAULTS = HelmChart.DIRECTORY.resolve("ci/default-values.yaml");

    /**
     * The settings the guards check, and what else could replace one of them (the other request lanes' poll intervals,
     * the JVM option variables, the Quarkus profile that decides which profile-prefixed names count), which the chart
     * writes in the container's {@code env} itself, the checked settings of the configuration again under the profile.
     */
    private static final List<String> CHECKED = List.of(
            "IMAGE_WORKER_GATEWAY_TIMEOUT",
            "IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE",
            "IMAGE_WORKER_SHUTDOWN_GRACE",
            "IMAGE_WORKER_REBALANCE_GRACE",
            "MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS",
            "MP_MESSAGING_INCOMING_PRIORITY_REQUESTS_MAX_POLL_INTERVAL_MS",
            "MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS",
            "JAVA_OPTS_APPEND",
            "JAVA_OPTS",
            "JAVA_TOOL_OPTIONS",
            "JDK_JAVA_OPTIONS",
            "QUARKUS_PROFILE",
            "QUARKUS_CONFIG_PROFILE_PARENT",
            "_PROD_IMAGE_WORKER_GATEWAY_TIMEOUT",
            "_PROD_IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE",
            "_PROD_IMAGE_WORKER_SHUTDOWN_GRACE",
            "_PROD_IMAGE_WORKER_REBALANCE_GRACE",
            "_PROD_MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS",
            "_PROD_MP_MESSAGING_INCOMING_PRIORITY_REQUESTS_MAX_POLL_INTERVAL_MS",
            "_PROD_MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS");

    /**
     * What a ConfigMap or Secret outside the chart might hold: every checked setting at a value the guards refuse (a
     * 20-minute call, a 10 s grace, a 30 s poll, a -D grace), the same under the profile's prefix and under another
     * profile it names, and one unchecked setting.
     */
    private static final Map<String, String> OVERRIDES = Map.ofEntries(
            Map.entry("IMAGE_WORKER_GATEWAY_TIMEOUT", "20m"),
            Map.entry("IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE", "30m"),
            Map.entry("IMAGE_WORKER_SHUTDOWN_GRACE", "10s"),
            Map.entry("IMAGE_WORKER_REBALANCE_GRACE", "5s"),
            Map.entry("MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS", "30000"),
            Map.entry("MP_MESSAGING_INCOMING_PRIORITY_REQUESTS_MAX_POLL_INTERVAL_MS", "30000"),
            Map.entry("MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS", "30000"),
            Map.entry("JAVA_OPTS_APPEND", "-Dimage-worker.shutdown-grace=10s"),
            Map.entry("JAVA_OPTS", "-Dimage-worker.shutdown-grace=10s"),
            Map.entry("JAVA_TOOL_OPTIONS", "-Dimage-worker.rebalance-grace=5s"),
            Map.entry("JDK_JAVA_OPTIONS", "-Dimage-worker.gateway.timeout=20m"),
            Map.entry("_PROD_IMAGE_WORKER_SHUTDOWN_GRACE", "10s"),
            Map.entry("_PROD_MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS", "30000"),
            Map.entry("QUARKUS_PROFILE", "staging"),
            Map.entry("QUARKUS_CONFIG_PROFILE_PARENT", "staging"),
            Map.entry("_STAGING_IMAGE_WORKER_SHUTDOWN_GRACE", "10s"),
            Map.entry("IMAGE_WORKER_CONCURRENCY", "4"));

    // ---- the margin: a call, then its store and its publish

    @Test
    void theShutdownGraceMustCoverTheCallAndThePatienceNotTheCallAlone() {
        assertThat(HelmChart.refusal(DEFAULTS, Map.of("shutdownGraceSeconds", 180)))
                .contains("the shutdown grace (180s: shutdownGraceSeconds, or IMAGE_WORKER_SHUTDOWN_GRACE in extraEnv)")
                .contains("(180s + 120s = 300s: gateway.timeout, or IMAGE_WORKER_GATEWAY_TIMEOUT in extraEnv;"
                        + " IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE in extraEnv, 2m by default)");
        assertThat(variable(
                        HelmChart.render(DEFAULTS, Map.of("shutdownGraceSeconds", 300)), "IMAGE_WORKER_SHUTDOWN_GRACE"))
                .isEqualTo("300s");
        // A longer patience, set through extraEnv, asks for a longer grace.
        Map<String, Object> patient = new LinkedHashMap<>(extraEnv("IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE", "4m"));
        patient.put("shutdownGraceSeconds", 419);
        assertThat(HelmChart.refusal(DEFAULTS, patient)).contains("(180s + 240s = 420s");
        patient.put("shutdownGraceSeconds", 420);
        assertThat(variable(HelmChart.render(DEFAULTS, patient), "IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE"))
                .isEqualTo("4m");
    }

    /** The chart writes the patience even when unset, so its default must be the worker's, or the margin drifts. */
    @Test
    void theInfrastructurePatienceTheChartWritesByDefaultIsTheWorkersDefault() {
        assertThat(WorkerEnvironment.duration(
                        variable(HelmChart.render(DEFAULTS, Map.of()), "IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE")))
                .isEqualTo(TestConfig.settings(RetrySettings.class).infrastructurePatience());
    }

    // ---- the rebalance grace and the poll interval

    @ParameterizedTest
    @CsvSource({
        // gateway.timeout, patience (extraEnv, empty: the default), rebalance grace, max.poll.interval.ms
        "180s, , 300s, 600000",
        "10m, , 720s, 780000",
        "3m, 5m, 480s, 600000",
        "1h, 2m, 3720s, 3780000"
    })
    void theRebalanceGraceIsDerivedFromTheCallAndThePatienceAndThePollIntervalFromIt(
            String timeout, String patience, String grace, String poll) {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("gateway.timeout", timeout);
        values.put("shutdownGraceSeconds", 4000);
        if (patience != null) {
            values.putAll(extraEnv("IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE", patience));
        }
        Rendering rendering = HelmChart.render(DEFAULTS, values);

        assertThat(variable(rendering, "IMAGE_WORKER_REBALANCE_GRACE")).isEqualTo(grace);
        assertThat(variable(rendering, "MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS"))
                .isEqualTo(poll);
        WorkerInvariants.gracesCoverACallAndThePollOutlastsTheRebalance(rendering);
    }

    @Test
    void aRebalanceGraceSetLongerIsTakenAndAShorterOneOnlyWhenItsCostIsAccepted() {
        Rendering longer = HelmChart.render(DEFAULTS, Map.of("rebalanceGraceSeconds", 700));
        assertThat(variable(longer, "IMAGE_WORKER_REBALANCE_GRACE")).isEqualTo("700s");
        assertThat(variable(longer, "MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS"))
                .isEqualTo("760000");

        assertThat(HelmChart.refusal(DEFAULTS, Map.of("rebalanceGraceSeconds", 299)))
                .contains(
                        "the rebalance grace (299s: rebalanceGraceSeconds, or IMAGE_WORKER_REBALANCE_GRACE in extraEnv)")
                .contains("(180s + 120s = 300s")
                .contains("allowShortRebalanceGrace=true");
        Rendering accepted =
                HelmChart.render(DEFAULTS, Map.of("rebalanceGraceSeconds", 60, "allowShortRebalanceGrace", true));
        assertThat(variable(accepted, "IMAGE_WORKER_REBALANCE_GRACE")).isEqualTo("60s");
        assertThat(variable(accepted, "MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS"))
                .isEqualTo("600000");
    }

    @Test
    void anExplicitPollIntervalIsTakenWhenItOutlastsTheRebalanceGraceAndRefusedOtherwise() {
        assertThat(variable(
                        HelmChart.render(DEFAULTS, Map.of("kafka.maxPollIntervalMs", 900000)),
                        "MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS"))
                .isEqualTo("900000");
        assertThat(HelmChart.refusal(DEFAULTS, Map.of("kafka.maxPollIntervalMs", 359999)))
                .contains("max.poll.interval.ms (359999: kafka.maxPollIntervalMs")
                .contains("at least the rebalance grace + 60 s (360000 ms)");
        // Kafka's own default (5 minutes) is too short for the default grace.
        assertThat(HelmChart.refusal(
                        DEFAULTS, extraEnv("MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS", "300000")))
                .contains("max.poll.interval.ms (300000");
    }

    // ---- extraEnv

    @Test
    void aCheckedSettingGivenInExtraEnvIsCheckedAndWrittenOnceWithItsValue() {
        assertThat(HelmChart.refusal(DEFAULTS, extraEnv("IMAGE_WORKER_REBALANCE_GRACE", "1m")))
                .contains("the rebalance grace (60s");
        assertThat(HelmChart.refusal(DEFAULTS, extraEnv("IMAGE_WORKER_GATEWAY_TIMEOUT", "5m")))
                .contains("the shutdown grace (300s");

        Map<String, Object> values = new LinkedHashMap<>(extraEnv("IMAGE_WORKER_REBALANCE_GRACE", "10m"));
        values.put("extraEnv[1].name", "IMAGE_WORKER_RETRY_REQUEST_DEADLINE");
        values.put("extraEnv[1].value", "15m");
        Rendering rendering = HelmChart.render(DEFAULTS, values);
        List<String> names =
                rendering.worker().getEnv().stream().map(EnvVar::getName).toList();
        assertThat(names).containsOnlyOnce("IMAGE_WORKER_REBALANCE_GRACE");
        assertThat(names).contains("IMAGE_WORKER_RETRY_REQUEST_DEADLINE");
        assertThat(variable(rendering, "IMAGE_WORKER_REBALANCE_GRACE")).isEqualTo("10m");
        assertThat(variable(rendering, "MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS"))
                .isEqualTo("660000");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE",
                "IMAGE_WORKER_REBALANCE_GRACE",
                "MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS",
                "JAVA_OPTS_APPEND",
                "JAVA_TOOL_OPTIONS",
                "JDK_JAVA_OPTIONS",
                "JAVA_OPTS",
                "QUARKUS_PROFILE",
                "QUARKUS_CONFIG_PROFILE_PARENT"
            })
    void aCheckedSettingOrJvmOptionsTakenFromElsewhereInExtraEnvIsRefused(String name) {
        Map<String, Object> values = Map.of(
                "extraEnv[0].name", name,
                "extraEnv[0].valueFrom.secretKeyRef.name", "elsewhere",
                "extraEnv[0].valueFrom.secretKeyRef.key", "value");

        assertThat(HelmChart.refusal(DEFAULTS, values)).contains("extraEnv must give " + name + " as a literal value");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "_PROD_IMAGE_WORKER_SHUTDOWN_GRACE",
                "_PROD_IMAGE_WORKER_REBALANCE_GRACE",
                "_STAGING_IMAGE_WORKER_GATEWAY_TIMEOUT",
                "_PROD_MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS",
                "MP_MESSAGING_INCOMING_PRIORITY_REQUESTS_MAX_POLL_INTERVAL_MS",
                "MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS",
                "_PROD_MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS"
            })
    void aCheckedSettingUnderAnotherNameThatOutranksItInExtraEnvIsRefused(String name) {
        assertThat(HelmChart.refusal(DEFAULTS, extraEnv(name, "10s"))).contains("extraEnv must not set " + name);
    }

    /**
     * A profile given in extraEnv (a literal, read at render time) is the one the pod runs with: the checked settings
     * are written under each profile it names, and its parent's, so that none of their prefixed names in an envFrom
     * source counts; the JVM option variables given there are written with their (checked) value.
     */
    @Test
    void aProfileGivenInExtraEnvGetsTheCheckedSettingsUnderItsPrefix() {
        Map<String, Object> values = new LinkedHashMap<>(extraEnv("QUARKUS_PROFILE", "prod,eu-west"));
        values.put("extraEnv[1].name", "QUARKUS_CONFIG_PROFILE_PARENT");
        values.put("extraEnv[1].value", "common");
        values.put("extraEnv[2].name", "JAVA_TOOL_OPTIONS");
        values.put("extraEnv[2].value", "-Xss1m");
        Rendering rendering = HelmChart.render(DEFAULTS, values);
        Map<String, Rendering.Variable> environment = rendering.environment();

        assertThat(variable(rendering, "QUARKUS_PROFILE")).isEqualTo("prod,eu-west");
        assertThat(variable(rendering, "JAVA_TOOL_OPTIONS")).isEqualTo("-Xss1m");
        for (String prefix : List.of("_PROD_", "_EU_WEST_", "_COMMON_")) {
            assertThat(environment.get(prefix + "IMAGE_WORKER_SHUTDOWN_GRACE"))
                    .as(prefix)
                    .isEqualTo(environment.get("IMAGE_WORKER_SHUTDOWN_GRACE"));
            assertThat(environment.get(prefix + "MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS"))
                    .as(prefix)
                    .isEqualTo(environment.get("MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS"));
        }
        List<String> names =
                rendering.worker().getEnv().stream().map(EnvVar::getName).toList();
        assertThat(names).containsOnlyOnce("QUARKUS_PROFILE", "JAVA_TOOL_OPTIONS");
    }

    // ---- extraEnvFrom and the existing Secret: envFrom sources the chart cannot read

    @ParameterizedTest
    @ValueSource(strings = {"configMapRef", "secretRef"})
    void anExtraEnvFromSourceCannotReplaceACheckedSetting(String kind) {
        Map<String, Object> values = Map.of("extraEnvFrom[0]." + kind + ".name", "overrides");
        Rendering chart = HelmChart.render(DEFAULTS, values);
        HasMetadata source = kind.equals("configMapRef")
                ? new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("overrides")
                        .endMetadata()
                        .withData(OVERRIDES)
                        .build()
                : new SecretBuilder()
                        .withNewMetadata()
                        .withName("overrides")
                        .endMetadata()
                        .withStringData(OVERRIDES)
                        .build();

        assertTheCheckedSettingsHold(with(chart, source));
    }

    @Test
    void theExistingSecretCannotReplaceACheckedSetting() {
        Rendering chart = HelmChart.render(DEFAULTS, Map.of());
        Map<String, String> keys = new LinkedHashMap<>(OVERRIDES);
        keys.put("IMAGE_WORKER_GATEWAY_API_KEY", "sk-x");
        HasMetadata secret = new SecretBuilder()
                .withNewMetadata()
                .withName("image-worker")
                .endMetadata()
                .withStringData(keys)
                .build();

        assertThat(chart.worker().getEnvFrom())
                .anyMatch(from -> from.getSecretRef() != null
                        && from.getSecretRef().getName().equals("image-worker"));
        assertTheCheckedSettingsHold(with(chart, secret));
    }

    /**
     * Every checked setting is an {@code env} entry of the container, which Kubernetes puts above every {@code envFrom}
     * source: with the source read, the worker's environment still holds the chart's values for them (those of a
     * release without the source), while an unchecked key of the source does reach it.
     */
    private static void assertTheCheckedSettingsHold(Rendering withSource) {
        Map<String, Rendering.Variable> before =
                HelmChart.render(DEFAULTS, Map.of()).environment();
        Map<String, Rendering.Variable> after = withSource.environment();
        for (String name : CHECKED) {
            assertThat(after.get(name)).as(name).isEqualTo(before.get(name));
            assertThat(after.get(name).source()).as(name).isEqualTo(Rendering.Source.LITERAL);
        }
        assertThat(after.get("IMAGE_WORKER_CONCURRENCY").value())
                .as("an unchecked key of the source")
                .isEqualTo("4");
        WorkerInvariants.gracesCoverACallAndThePollOutlastsTheRebalance(withSource);
        // And as the worker's configuration reads the environment, with the profile the pod runs with: a name under a
        // profile's prefix wins over the plain one, so each checked setting must resolve to the chart's value.
        SmallRyeConfig config = asTheWorkerReadsIt(after);
        assertThat(config.getProfiles()).containsExactly("prod");
        for (String property : List.of(
                "image-worker.gateway.timeout",
                "image-worker.retry.infrastructure-patience",
                "image-worker.shutdown-grace",
                "image-worker.rebalance-grace",
                "mp.messaging.incoming.requests.max.poll.interval.ms",
                "mp.messaging.incoming.priority-requests.max.poll.interval.ms",
                "mp.messaging.incoming.parked-requests.max.poll.interval.ms")) {
            assertThat(config.getRawValue(property))
                    .as(property)
                    .isEqualTo(before.get(WorkerEnvironment.environmentName(property))
                            .value());
        }
    }

    /** The environment read as SmallRye Config reads it, with the profile its {@code QUARKUS_PROFILE} names. */
    private static SmallRyeConfig asTheWorkerReadsIt(Map<String, Rendering.Variable> environment) {
        Map<String, String> values = new LinkedHashMap<>();
        environment.forEach((name, variable) -> {
            if (variable.value() != null) {
                values.put(name, variable.value());
            }
        });
        return new SmallRyeConfigBuilder()
                .withProfile(values.get("QUARKUS_PROFILE"))
                .withSources(new EnvConfigSource(values, 300))
                .build();
    }

    private static Rendering with(Rendering chart, HasMetadata manifest) {
        List<Object> manifests = new ArrayList<>(chart.manifests());
        manifests.add(manifest);
        return new Rendering(manifests);
    }

    @ParameterizedTest
    @MethodSource("io.imageworker.deploy.HelmChartTest#ciValues")
    void everyCiValuesFileWritesTheCheckedSettingsInTheContainersEnv(Path values) {
        Rendering rendering = HelmChart.render(values, Map.of());
        Map<String, Rendering.Variable> environment = rendering.environment();

        for (String name : CHECKED) {
            assertThat(environment.get(name)).as(name).isNotNull();
            assertThat(environment.get(name).source()).as(name).isEqualTo(Rendering.Source.LITERAL);
        }
        assertThat(rendering.all(ConfigMap.class))
                .allSatisfy(map -> assertThat(map.getData()).doesNotContainKeys(CHECKED.toArray(String[]::new)));
    }

    // ---- jvm.extraOpts: a system property outranks the environment

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "-Dimage-worker.shutdown-grace=10s | image-worker.shutdown-grace",
                "-XX:+ExitOnOutOfMemoryError -Dimage-worker.rebalance-grace=5s | image-worker.rebalance-grace",
                "-Dimage-worker.gateway.timeout=20m | image-worker.gateway.timeout",
                "-Dimage-worker.retry.infrastructure-patience=1s | image-worker.retry.infrastructure-patience",
                "-DIMAGE_WORKER_SHUTDOWN_GRACE=10s | image-worker.shutdown-grace",
                "'-D%prod.image-worker.shutdown-grace=10s' | image-worker.shutdown-grace",
                "-Dmp.messaging.incoming.requests.max.poll.interval.ms=30000"
                        + " | mp.messaging.incoming.requests.max.poll.interval.ms",
                "-Dmp.messaging.incoming.priority-requests.max.poll.interval.ms=30000"
                        + " | mp.messaging.incoming.priority-requests.max.poll.interval.ms",
                "-Dmp.messaging.incoming.parked-requests.max.poll.interval.ms=30000"
                        + " | mp.messaging.incoming.parked-requests.max.poll.interval.ms",
                "-Dquarkus.profile=staging | quarkus.profile",
                "-Dquarkus.config.profile.parent=staging | quarkus.config.profile.parent"
            })
    void aSystemPropertyOnACheckedSettingInJvmExtraOptsIsRefused(String options, String property) {
        assertThat(HelmChart.refusal(DEFAULTS, Map.of("jvm.extraOpts", options)))
                .contains("jvm.extraOpts must not set " + property)
                .contains("a system property outranks the environment");
    }

    @Test
    void aSystemPropertyOnACheckedSettingInAJvmOptionsVariableOfExtraEnvIsRefused() {
        assertThat(HelmChart.refusal(DEFAULTS, extraEnv("JAVA_TOOL_OPTIONS", "-Dimage-worker.rebalance-grace=5s")))
                .contains("extraEnv JAVA_TOOL_OPTIONS must not set image-worker.rebalance-grace");
        assertThat(HelmChart.refusal(DEFAULTS, extraEnv("JAVA_OPTS_APPEND", "-Dimage-worker.shutdown-grace=10s")))
                .contains("extraEnv JAVA_OPTS_APPEND must not set image-worker.shutdown-grace");
    }

    @Test
    void otherSystemPropertiesAreLeftAlone() {
        Rendering rendering = HelmChart.render(
                DEFAULTS, Map.of("jvm.extraOpts", "-XX:+ExitOnOutOfMemoryError -Dimage-worker.concurrency=8"));

        assertThat(variable(rendering, "JAVA_OPTS_APPEND"))
                .endsWith(" -XX:ActiveProcessorCount=2 -XX:+ExitOnOutOfMemoryError -Dimage-worker.concurrency=8");
    }

    // ---- NOTES: what the pod runs with

    @Test
    void theNotesPrintWhatThePodRunsWithNotTheValuesFile() {
        Map<String, Object> values = new LinkedHashMap<>(extraEnv("IMAGE_WORKER_GATEWAY_TIMEOUT", "4m"));
        values.put("extraEnv[1].name", "IMAGE_WORKER_SHUTDOWN_GRACE");
        values.put("extraEnv[1].value", "7m");
        String notes = HelmChart.notes(DEFAULTS, values);

        assertThat(notes)
                .contains("a gateway call up to 240s,\nthen up to 120s to store and publish its result (360s in all)")
                .contains("calls in flight get 420s (IMAGE_WORKER_SHUTDOWN_GRACE) to finish, the pod 450s before")
                .contains("get 360s (IMAGE_WORKER_REBALANCE_GRACE, derived: the call + the patience)")
                .contains("max.poll.interval.ms 600000.")
                .doesNotContain("300s")
                .doesNotContain("WARNING");
        assertThat(HelmChart.notes(DEFAULTS, Map.of("rebalanceGraceSeconds", 900)))
                .contains("get 900s (IMAGE_WORKER_REBALANCE_GRACE) before")
                .contains("max.poll.interval.ms 960000.");
    }

    @Test
    void theNotesWarnOfAShortGraceOnlyWhenItIsShort() {
        String notes = HelmChart.notes(
                DEFAULTS,
                Map.of(
                        "shutdownGraceSeconds",
                        60,
                        "allowShortShutdownGrace",
                        true,
                        "rebalanceGraceSeconds",
                        30,
                        "allowShortRebalanceGrace",
                        true));

        assertThat(notes)
                .contains("WARNING: the shutdown grace (60s) is shorter than a call, its store and its publish (300s)")
                .contains(
                        "WARNING: the rebalance grace (30s) is shorter than a call, its store and its publish (300s)");
        assertThat(HelmChart.notes(DEFAULTS, Map.of("allowShortShutdownGrace", true)))
                .doesNotContain("WARNING");
    }

    private static Map<String, Object> extraEnv(String name, String value) {
        return Map.of("extraEnv[0].name", name, "extraEnv[0].value", value);
    }

    private static String variable(Rendering rendering, String name) {
        return rendering.environment().get(name).value();
    }
}
