package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.imageworker.config.WorkerConfig;
import io.imageworker.support.RetrySettings;
import io.imageworker.testing.TestConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Helm chart, checked without a helm binary or a cluster: Helm's own library lints and renders it, fabric8's
 * Kubernetes model reads every manifest as strictly as the API server would, and the properties the worker's delivery
 * guarantees rest on are checked on every rendering.
 */
class HelmChartTest {

    private static final Path DEFAULTS = HelmChart.DIRECTORY.resolve("ci/default-values.yaml");
    private static final ObjectMapper JSON = new ObjectMapper();

    static List<Path> ciValues() {
        return HelmChart.ciValues();
    }

    @ParameterizedTest
    @MethodSource("ciValues")
    void lintsStrictlyWithEveryCiValuesFile(Path values) {
        LintResult lint = HelmChart.lint(values);

        assertThat(lint.isFailed()).as("%s", lint.getMessages()).isFalse();
        assertThat(lint.getMessages()).noneMatch(m -> m.contains("[ERROR]") || m.contains("[WARNING]"));
    }

    @ParameterizedTest
    @MethodSource("ciValues")
    void rendersEveryCiValuesFileIntoManifestsTheApiAccepts(Path values) {
        Rendering rendering = HelmChart.render(values, Map.of());

        // helm-java renders the release's manifest, not its hooks: see the next test.
        assertThat(rendering.all(Pod.class)).isEmpty();
        assertThat(rendering.manifests()).hasSizeGreaterThanOrEqualTo(4);
        WorkerInvariants.check(rendering);
    }

    @ParameterizedTest
    @MethodSource("ciValues")
    void rendersEveryCiValuesFilesHooksIntoManifestsTheApiAccepts(Path values) {
        Rendering rendering = HelmChart.renderWithHooks(values, Map.of());

        assertThat(rendering.all(Pod.class)).as("the helm test").hasSize(1);
        rendering
                .all(Job.class)
                .forEach(job -> WorkerInvariants.runsAsNonRootOnAReadOnlyRoot(
                        job.getSpec().getTemplate().getSpec()));
        WorkerInvariants.runsAsNonRootOnAReadOnlyRoot(rendering.one(Pod.class).getSpec());
    }

    @ParameterizedTest
    @MethodSource("ciValues")
    void theKedaTriggerWatchesTheWorkersTopicAndGroup(Path values) {
        Rendering rendering = HelmChart.render(values, Map.of("keda.enabled", true));
        Map<String, Rendering.Variable> environment = rendering.environment();
        StrictManifests.ScaledObject scaler = rendering.one(StrictManifests.ScaledObject.class);

        assertThat(scaler.spec().scaleTargetRef().name())
                .isEqualTo(rendering.deployment().getMetadata().getName());
        assertThat(rendering.deployment().getSpec().getReplicas())
                .as("KEDA owns the replica count")
                .isNull();
        List<String> consumed = Stream.of(
                        "IMAGE_WORKER_TOPIC_REQUEST",
                        "IMAGE_WORKER_TOPIC_REQUEST_PRIORITY",
                        "IMAGE_WORKER_TOPIC_REQUEST_PARKED")
                .map(name -> environment.get(name).value())
                .filter(topic -> !topic.isEmpty())
                .toList();
        // A trigger per topic the group reads; with the pause guard also a second one on the parked topic (the
        // formula's whole parked lag) and the Prometheus one.
        List<StrictManifests.ScaledObject.Trigger> kafka = scaler.spec().triggers().stream()
                .filter(trigger -> !trigger.type().equals("prometheus"))
                .toList();
        assertThat(kafka)
                .filteredOn(trigger -> !"parkedBacklog".equals(trigger.name()))
                .extracting(trigger -> trigger.metadata().get("topic"))
                .containsExactlyElementsOf(consumed);
        assertThat(kafka).allSatisfy(trigger -> {
            assertThat(trigger.type()).isEqualTo("kafka");
            assertThat(trigger.metadata())
                    .containsEntry(
                            "consumerGroup",
                            environment.get("IMAGE_WORKER_CONSUMER_GROUP").value())
                    .containsEntry(
                            "bootstrapServers",
                            environment.get("KAFKA_BOOTSTRAP_SERVERS").value());
        });
    }

    @Test
    void theKedaTriggerFollowsRenamedTopicsAndGroups() {
        Rendering rendering = HelmChart.render(
                DEFAULTS,
                Map.of(
                        "keda.enabled", true,
                        "kafka.consumerGroup", "images-eu",
                        "kafka.topics.request", "image-request-eu"));

        assertThat(rendering
                        .one(StrictManifests.ScaledObject.class)
                        .spec()
                        .triggers()
                        .get(0)
                        .metadata())
                .containsEntry("topic", "image-request-eu")
                .containsEntry("consumerGroup", "images-eu");
        assertThat(rendering.environment().get("IMAGE_WORKER_TOPIC_REQUEST").value())
                .isEqualTo("image-request-eu");
    }

    @Test
    void derivesTheTerminationGraceFromTheShutdownGrace() {
        Deployment deployment =
                HelmChart.render(DEFAULTS, Map.of("shutdownGraceSeconds", 400)).deployment();

        assertThat(deployment.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds())
                .isEqualTo(430L);
    }

    @Test
    void theDefaultGraceCoversAGatewayCallItsStoreAndItsPublishAndThePodOutlivesIt() {
        Rendering rendering = HelmChart.render(DEFAULTS, Map.of());
        Map<String, Rendering.Variable> environment = rendering.environment();
        Duration grace = WorkerEnvironment.duration(
                environment.get("IMAGE_WORKER_SHUTDOWN_GRACE").value());
        Duration call = WorkerEnvironment.duration(
                environment.get("IMAGE_WORKER_GATEWAY_TIMEOUT").value());
        WorkerConfig worker = TestConfig.worker();
        Duration patience = TestConfig.settings(RetrySettings.class).infrastructurePatience();

        // What the worker itself allows for a call, then for storing, downloading and publishing.
        assertThat(grace).isGreaterThanOrEqualTo(call.plus(patience));
        assertThat(grace).isEqualTo(worker.drainGrace(call, patience));
        assertThat(rendering.deployment().getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds())
                .isEqualTo(grace.toSeconds() + 30);
    }

    /**
     * The grace covers a whole call and then its store and its publish (the infrastructure patience, 120 s by
     * default): a grace equal to the gateway timeout leaves a call that uses all of it no time to be stored.
     */
    @ParameterizedTest
    @CsvSource({"180s, 180", "3m, 180", "180000ms, 180", "179001ms, 180", "1h, 3600"})
    void refusesAShutdownGraceShorterThanTheGatewayTimeoutPlusThePatienceInEveryUnit(String timeout, int seconds) {
        int covered = seconds + 120;
        Map<String, Object> enough = Map.of("gateway.timeout", timeout, "shutdownGraceSeconds", covered);
        Map<String, Object> shorter = Map.of("gateway.timeout", timeout, "shutdownGraceSeconds", covered - 1);
        Map<String, Object> onlyTheCall = Map.of("gateway.timeout", timeout, "shutdownGraceSeconds", seconds);

        assertThat(HelmChart.render(DEFAULTS, enough)
                        .environment()
                        .get("IMAGE_WORKER_SHUTDOWN_GRACE")
                        .value())
                .isEqualTo(covered + "s");
        assertThat(HelmChart.refusal(DEFAULTS, shorter))
                .contains("is shorter than the gateway timeout + the infrastructure patience (" + seconds
                        + "s + 120s = " + covered + "s");
        assertThat(HelmChart.refusal(DEFAULTS, onlyTheCall))
                .contains("the shutdown grace (" + seconds + "s: shutdownGraceSeconds")
                .contains("IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE");
    }

    @Test
    void rendersAShortGraceWhenItsCostIsAccepted() {
        Rendering rendering =
                HelmChart.render(DEFAULTS, Map.of("shutdownGraceSeconds", 60, "allowShortShutdownGrace", true));

        assertThat(rendering.environment().get("IMAGE_WORKER_SHUTDOWN_GRACE").value())
                .isEqualTo("60s");
        assertThat(rendering.deployment().getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds())
                .isEqualTo(90L);
    }

    /** The grace guard reads what the worker runs with: a value set through extraEnv is no way around it. */
    @ParameterizedTest
    @CsvSource({
        "IMAGE_WORKER_GATEWAY_TIMEOUT, 10m",
        "IMAGE_WORKER_SHUTDOWN_GRACE, 120s",
        "IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE, 5m"
    })
    void refusesAGatewayTimeoutAPatienceOrAGraceSetThroughExtraEnvThatCutsCallsOff(String name, String value) {
        Map<String, Object> values = Map.of("extraEnv[0].name", name, "extraEnv[0].value", value);

        assertThat(HelmChart.refusal(DEFAULTS, values))
                .contains("the shutdown grace")
                .contains("is shorter than the gateway timeout + the infrastructure patience");
        assertThat(HelmChart.render(
                                DEFAULTS,
                                Map.of(
                                        "extraEnv[0].name",
                                        name,
                                        "extraEnv[0].value",
                                        value,
                                        "allowShortShutdownGrace",
                                        true,
                                        "allowShortRebalanceGrace",
                                        true))
                        .environment()
                        .get(name)
                        .value())
                .isEqualTo(value);
    }

    @Test
    void aLongerGraceSetThroughExtraEnvLengthensThePodsTerminationGrace() {
        Map<String, Object> longer =
                Map.of("extraEnv[0].name", "IMAGE_WORKER_SHUTDOWN_GRACE", "extraEnv[0].value", "900s");

        assertThat(HelmChart.render(DEFAULTS, longer)
                        .deployment()
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getTerminationGracePeriodSeconds())
                .isEqualTo(930L);
        Map<String, Object> podKilledInTheDrain = new LinkedHashMap<>(longer);
        podKilledInTheDrain.put("terminationGracePeriodSeconds", 340);
        assertThat(HelmChart.refusal(DEFAULTS, podKilledInTheDrain))
                .contains("must be at least the shutdown grace + 10 (910)");
    }

    @Test
    void theSpendGuardIsOffUntilACapIsSetAndThenSharesTheChartsBudgetTopic() {
        Map<String, Rendering.Variable> off =
                HelmChart.render(DEFAULTS, Map.of()).environment();
        Map<String, Rendering.Variable> on = HelmChart.render(
                        DEFAULTS,
                        Map.of(
                                "budget.maxCalls", 500,
                                "budget.window", "30m",
                                "budget.onExceeded", "fail",
                                "kafka.topics.budget", "team-a-budget"))
                .environment();

        assertThat(off).doesNotContainKey("IMAGE_WORKER_BUDGET_MAX_CALLS");
        assertThat(on.get("IMAGE_WORKER_BUDGET_MAX_CALLS").value()).isEqualTo("500");
        assertThat(on.get("IMAGE_WORKER_BUDGET_WINDOW").value()).isEqualTo("30m");
        assertThat(on.get("IMAGE_WORKER_BUDGET_ON_EXCEEDED").value()).isEqualTo("fail");
        assertThat(on.get("IMAGE_WORKER_BUDGET_PRICE_PER_CALL").value()).isEqualTo("0");
        assertThat(on.get("IMAGE_WORKER_TOPIC_BUDGET").value()).isEqualTo("team-a-budget");
    }

    @Test
    void producerCapsAloneTurnTheSpendGuardOnWithoutAFleetCap() {
        Map<String, Rendering.Variable> off =
                HelmChart.render(DEFAULTS, Map.of()).environment();
        Map<String, Rendering.Variable> on = HelmChart.render(
                        DEFAULTS, Map.of("budget.perProducer", "catalogue=5000/1h,edits=200/10m"))
                .environment();

        assertThat(off.get("IMAGE_WORKER_BUDGET_PER_PRODUCER").value()).isEmpty();
        assertThat(off).doesNotContainKey("IMAGE_WORKER_BUDGET_ON_EXCEEDED");
        assertThat(on.get("IMAGE_WORKER_BUDGET_PER_PRODUCER").value()).isEqualTo("catalogue=5000/1h,edits=200/10m");
        assertThat(on).doesNotContainKey("IMAGE_WORKER_BUDGET_MAX_CALLS");
        assertThat(on.get("IMAGE_WORKER_BUDGET_ON_EXCEEDED").value()).isEqualTo("pause");
        assertThat(on.get("IMAGE_WORKER_TOPIC_BUDGET").value()).isEqualTo("image-worker-budget");
        assertThat(HelmChart.refusal(DEFAULTS, Map.of("budget.perProducer", "catalogue=5000")))
                .contains("perProducer");
    }

    @Test
    void theMemoryBudgetFollowsTheHeapUnlessSetAndTheHeapFollowsTheLimit() {
        Map<String, Rendering.Variable> byDefault =
                HelmChart.render(DEFAULTS, Map.of()).environment();
        Map<String, Rendering.Variable> set =
                HelmChart.render(DEFAULTS, Map.of("memoryBudget", "300Mi")).environment();

        // Unset, the worker takes half its heap, and the heap is this share of the pod's memory limit.
        assertThat(byDefault).doesNotContainKey("IMAGE_WORKER_MEMORY_BUDGET");
        assertThat(byDefault.get("JAVA_MAX_MEM_RATIO").value()).isEqualTo("75");
        assertThat(set.get("IMAGE_WORKER_MEMORY_BUDGET").value()).isEqualTo("300Mi");
    }

    @Test
    void theReadAheadIsTheWorkersDefaultUnlessSetAndZeroTurnsItOff() {
        assertThat(HelmChart.render(DEFAULTS, Map.of())
                        .environment()
                        .get("IMAGE_WORKER_READ_AHEAD")
                        .value())
                .isEmpty();
        assertThat(HelmChart.render(DEFAULTS, Map.of("readAhead", 0))
                        .environment()
                        .get("IMAGE_WORKER_READ_AHEAD")
                        .value())
                .isEqualTo("0");
        assertThat(HelmChart.render(DEFAULTS, Map.of("readAhead", 2000))
                        .environment()
                        .get("IMAGE_WORKER_READ_AHEAD")
                        .value())
                .isEqualTo("2000");
        assertThat(HelmChart.refusal(DEFAULTS, Map.of("readAhead", -1))).contains("readAhead");
    }

    @Test
    void rollsThePodsWhenTheConfigurationChanges() {
        String before = checksum(HelmChart.render(DEFAULTS, Map.of()));
        String after = checksum(HelmChart.render(DEFAULTS, Map.of("concurrency", 8)));

        assertThat(before).isNotBlank().isNotEqualTo(after);
        assertThat(checksum(HelmChart.render(DEFAULTS, Map.of()))).isEqualTo(before);
    }

    private static String checksum(Rendering rendering) {
        return rendering
                .deployment()
                .getSpec()
                .getTemplate()
                .getMetadata()
                .getAnnotations()
                .get("checksum/config");
    }

    @Test
    void createsNoSecretWhenAnExistingOneIsNamed() {
        Rendering rendering = HelmChart.render(DEFAULTS, Map.of());

        assertThat(rendering.all(Secret.class)).isEmpty();
        assertThat(rendering.worker().getEnvFrom())
                .anyMatch(from -> from.getSecretRef() != null
                        && from.getSecretRef().getName().equals("image-worker"));
    }

    @Test
    void anInlineKeyEndsUpInTheChartsSecretAndNowhereElse() throws IOException {
        String key = "sk-inline-test-key";
        Rendering rendering =
                HelmChart.render(DEFAULTS, Map.of("secret.existingSecret", "", "secret.gatewayApiKey", key));

        assertThat(rendering.environment().get("IMAGE_WORKER_GATEWAY_API_KEY"))
                .isEqualTo(new Rendering.Variable(key, Rendering.Source.SECRET));
        for (Object manifest : rendering.manifests()) {
            if (!(manifest instanceof Secret)) {
                assertThat(JSON.writeValueAsString(manifest)).doesNotContain(key);
            }
        }
    }

    @Test
    void theConsoleIsOffUntilEnabledAndThenBehindItsTokenFromTheSecret() throws IOException {
        assertThat(HelmChart.render(DEFAULTS, Map.of()).environment())
                .doesNotContainKey("IMAGE_WORKER_CONSOLE_ENABLED");
        String token = "console-inline-test-token";
        Rendering rendering = HelmChart.render(
                DEFAULTS,
                Map.of(
                        "secret.existingSecret", "",
                        "secret.gatewayApiKey", "sk-x",
                        "secret.consoleToken", token,
                        "console.enabled", true,
                        "console.actions[0]", "cancel",
                        "kafka.topics.cancel", "image-cancel"));

        Map<String, Rendering.Variable> environment = rendering.environment();
        assertThat(environment.get("IMAGE_WORKER_CONSOLE_ENABLED").value()).isEqualTo("true");
        assertThat(environment.get("IMAGE_WORKER_CONSOLE_ACTIONS").value()).isEqualTo("cancel");
        assertThat(environment.get("IMAGE_WORKER_CONSOLE_MAX_ENTRIES").value()).isEqualTo("10000");
        assertThat(environment.get("IMAGE_WORKER_CONSOLE_TOKEN"))
                .isEqualTo(new Rendering.Variable(token, Rendering.Source.SECRET));
        for (Object manifest : rendering.manifests()) {
            if (!(manifest instanceof Secret)) {
                assertThat(JSON.writeValueAsString(manifest)).doesNotContain(token);
            }
        }
        assertThat(environment).doesNotContainKey("IMAGE_WORKER_CONSOLE_PRODUCER_ACCESS");
        // A token kept in the user's own Secret, said so.
        assertThat(HelmChart.render(DEFAULTS, Map.of("console.enabled", true, "console.tokenInExistingSecret", true))
                        .environment()
                        .get("IMAGE_WORKER_CONSOLE_ENABLED")
                        .value())
                .isEqualTo("true");
        // Each producer's own view, by its status token, where producers are authenticated.
        assertThat(HelmChart.render(
                                DEFAULTS,
                                Map.of(
                                        "console.enabled", true,
                                        "console.tokenInExistingSecret", true,
                                        "console.producerAccess", true,
                                        "producerIdentity", "topic",
                                        "producers", "catalogue,edits"))
                        .environment()
                        .get("IMAGE_WORKER_CONSOLE_PRODUCER_ACCESS")
                        .value())
                .isEqualTo("true");
    }

    // ---- strictness: the model refuses what the API server would

    @Test
    void aMisspeltFieldFailsTheRead() throws IOException {
        String yaml = HelmChart.template(DEFAULTS, Map.of());
        String misspelt = yaml.replace("readinessProbe:", "readinesProbe:");
        assertThat(misspelt).isNotEqualTo(yaml);

        // fabric8's model, read as a client reads it, keeps the unknown field aside and says nothing ...
        JsonNode document = StrictManifests.documents(misspelt).stream()
                .filter(d -> d.path("kind").asText().equals("Deployment"))
                .findFirst()
                .orElseThrow();
        Deployment lenient = JSON.treeToValue(document, Deployment.class);
        assertThat(lenient.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getReadinessProbe())
                .isNull();
        // ... the strict read refuses it.
        assertThatThrownBy(() -> StrictManifests.read(misspelt)).hasMessageContaining("readinesProbe");
    }

    @Test
    void aMisspeltFieldInUserValuesFailsTheRead() {
        String yaml = HelmChart.template(
                DEFAULTS,
                Map.of(
                        "extraVolumeMounts[0].name", "tmp",
                        "extraVolumeMounts[0].mountPth", "/cache"));

        assertThatThrownBy(() -> StrictManifests.read(yaml)).hasMessageContaining("mountPth");
    }

    @Test
    void anUnquotedNumberWhereKubernetesWantsAStringFailsTheRead() {
        String yaml = HelmChart.template(DEFAULTS, Map.of())
                .replace("QUARKUS_HTTP_PORT: \"8080\"", "QUARKUS_HTTP_PORT: 8080");

        assertThatThrownBy(() -> StrictManifests.read(yaml)).hasMessageContaining("ConfigMap");
    }

    // ---- fail guards: each `fail` in _validate.tpl refuses what it should, and says why

    /** One refused rendering: the values it starts from (which render), and the values that make it refused. */
    record Refusal(String name, String message, Map<String, Object> base, Map<String, Object> offending) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Refusal> failGuards() {
        Map<String, Object> inlineKey = Map.of("secret.existingSecret", "", "secret.gatewayApiKey", "sk-x");
        return List.of(
                new Refusal(
                        "no bootstrap servers",
                        "kafka.bootstrapServers is required",
                        Map.of(),
                        Map.of("kafka.bootstrapServers", "")),
                new Refusal("no gateway URL", "gateway.baseUrl is required", Map.of(), Map.of("gateway.baseUrl", "")),
                new Refusal("no model", "gateway.model is required", Map.of(), Map.of("gateway.model", "")),
                new Refusal(
                        "the producer taken from the topic, no producer named",
                        "producers is required with producerIdentity: topic",
                        Map.of("producerIdentity", "topic", "producers", "catalogue,edits"),
                        Map.of("producers", "")),
                new Refusal(
                        "the console without a token",
                        "console.enabled needs a token",
                        Map.of("console.tokenInExistingSecret", true),
                        Map.of("console.enabled", true, "console.tokenInExistingSecret", false)),
                new Refusal(
                        "the console's producer access with declared producers",
                        "console.producerAccess needs producerIdentity: topic",
                        Map.of(
                                "console.enabled", true,
                                "console.tokenInExistingSecret", true,
                                "console.producerAccess", true,
                                "producerIdentity", "topic",
                                "producers", "catalogue,edits"),
                        Map.of("producerIdentity", "declared")),
                new Refusal(
                        "the console's cancel without a cancel topic",
                        "console.actions cancel needs the cancel topic",
                        Map.of(
                                "console.enabled",
                                true,
                                "console.tokenInExistingSecret",
                                true,
                                "console.actions[0]",
                                "cancel",
                                "kafka.topics.cancel",
                                "image-cancel"),
                        Map.of("kafka.topics.cancel", "")),
                new Refusal(
                        "no key at all", "the gateway key is required", inlineKey, Map.of("secret.gatewayApiKey", "")),
                new Refusal(
                        "an existing Secret and an inline key",
                        "not both",
                        Map.of(),
                        Map.of("secret.gatewayApiKey", "sk-x")),
                new Refusal("half an AWS key pair", "go together", inlineKey, Map.of("secret.awsAccessKeyId", "id")),
                new Refusal(
                        "a shutdown grace shorter than a gateway call, its store and its publish",
                        "is shorter than the gateway timeout + the infrastructure patience (120s + 120s = 240s",
                        Map.of("gateway.timeout", "2m", "shutdownGraceSeconds", 240),
                        Map.of("shutdownGraceSeconds", 239)),
                new Refusal(
                        "a rebalance grace shorter than a gateway call, its store and its publish",
                        "the rebalance grace (239s: rebalanceGraceSeconds",
                        Map.of("gateway.timeout", "2m", "rebalanceGraceSeconds", 240),
                        Map.of("rebalanceGraceSeconds", 239)),
                new Refusal(
                        "a poll interval shorter than the rebalance grace + 60 s",
                        "must be at least the rebalance grace + 60 s (900000 ms)",
                        Map.of("rebalanceGraceSeconds", 840, "kafka.maxPollIntervalMs", 900000),
                        Map.of("kafka.maxPollIntervalMs", 899999)),
                new Refusal(
                        "a -D option that outranks a checked setting",
                        "jvm.extraOpts must not set image-worker.rebalance-grace",
                        Map.of("jvm.extraOpts", "-XX:+ExitOnOutOfMemoryError -Dimage-worker.concurrency=8"),
                        Map.of(
                                "jvm.extraOpts",
                                "-XX:+ExitOnOutOfMemoryError -Dimage-worker.concurrency=8"
                                        + " -Dimage-worker.rebalance-grace=10s")),
                new Refusal(
                        "a checked setting under a profile's name in extraEnv",
                        "extraEnv must not set _PROD_IMAGE_WORKER_SHUTDOWN_GRACE",
                        Map.of("extraEnv[0].name", "IMAGE_WORKER_SHUTDOWN_GRACE", "extraEnv[0].value", "400s"),
                        Map.of(
                                "extraEnv[1].name", "_PROD_IMAGE_WORKER_SHUTDOWN_GRACE",
                                "extraEnv[1].value", "10s")),
                new Refusal(
                        "a termination grace inside the drain",
                        "must be at least the shutdown grace + 10",
                        Map.of("shutdownGraceSeconds", 300, "terminationGracePeriodSeconds", 310),
                        Map.of("terminationGracePeriodSeconds", 305)),
                new Refusal(
                        "a guarded setting that extraEnv takes from elsewhere",
                        "extraEnv must give IMAGE_WORKER_GATEWAY_TIMEOUT as a literal value",
                        Map.of("extraEnv[0].name", "IMAGE_WORKER_RETRY_REQUEST_DEADLINE", "extraEnv[0].value", "15m"),
                        Map.of(
                                "extraEnv[1].name", "IMAGE_WORKER_GATEWAY_TIMEOUT",
                                "extraEnv[1].valueFrom.configMapKeyRef.name", "elsewhere",
                                "extraEnv[1].valueFrom.configMapKeyRef.key", "timeout")),
                new Refusal(
                        "more in-sync replicas required than there are replicas",
                        "exceeds topics.replicationFactor",
                        Map.of("topics.replicationFactor", 1, "topics.minInsyncReplicas", 1),
                        Map.of("topics.minInsyncReplicas", 2)),
                new Refusal(
                        "a parked topic kept less than a parked request may wait",
                        "topics.parkedRetention (2d, 172800000 ms) is shorter than the longest a parked request may wait",
                        Map.of("topics.parkedRetention", "3d"),
                        Map.of("topics.parkedRetention", "2d")),
                new Refusal(
                        "more KEDA replicas than partitions",
                        "keda.maxReplicaCount (7) exceeds topics.partitions (6)",
                        Map.of("keda.enabled", true, "keda.maxReplicaCount", 6),
                        Map.of("keda.maxReplicaCount", 7)),
                new Refusal(
                        "more HPA replicas than partitions",
                        "autoscaling.maxReplicas (13) exceeds topics.partitions (12)",
                        Map.of("autoscaling.enabled", true, "topics.partitions", 12, "autoscaling.maxReplicas", 12),
                        Map.of("autoscaling.maxReplicas", 13)),
                new Refusal(
                        "Strimzi topics without a cluster",
                        "topics.strimzi.cluster is required",
                        Map.of("topics.create", "strimzi", "topics.strimzi.cluster", "my-cluster"),
                        Map.of("topics.strimzi.cluster", "")),
                new Refusal(
                        "a readiness probe that times out before the store's ping",
                        "must exceed the store's ping timeout",
                        Map.of(
                                "extraEnv[0].name", "IMAGE_WORKER_STORAGE_PING_TIMEOUT",
                                "extraEnv[0].value", "4s",
                                "readinessProbe.timeoutSeconds", 5),
                        Map.of("readinessProbe.timeoutSeconds", 4)),
                new Refusal(
                        "an HPA and KEDA together",
                        "mutually exclusive",
                        Map.of("keda.enabled", true),
                        Map.of("autoscaling.enabled", true)),
                new Refusal(
                        "a PDB with both bounds",
                        "not both",
                        Map.of("podDisruptionBudget.enabled", true),
                        Map.of("podDisruptionBudget.minAvailable", 1)),
                new Refusal(
                        "a key as a literal extraEnv value",
                        "extraEnv must not carry IMAGE_WORKER_GATEWAY_API_KEY",
                        Map.of("extraEnv[0].name", "IMAGE_WORKER_RETRY_REQUEST_DEADLINE", "extraEnv[0].value", "15m"),
                        Map.of("extraEnv[1].name", "IMAGE_WORKER_GATEWAY_API_KEY", "extraEnv[1].value", "sk-x")),
                new Refusal(
                        "extraEnv moving the consumer group away from KEDA's",
                        "extraEnv must not set IMAGE_WORKER_CONSUMER_GROUP",
                        Map.of("extraEnv[0].name", "IMAGE_WORKER_RETRY_REQUEST_DEADLINE", "extraEnv[0].value", "15m"),
                        Map.of("extraEnv[1].name", "IMAGE_WORKER_CONSUMER_GROUP", "extraEnv[1].value", "other")),
                new Refusal(
                        "a port the worker dials that the NetworkPolicy leaves out",
                        "networkPolicy.kafka.ports (9092, 9093, 9094, 9096, 9098) leaves out port 9198",
                        Map.of("networkPolicy.enabled", true, "kafka.bootstrapServers", "b-1.msk.example:9098"),
                        Map.of("kafka.bootstrapServers", "b-1.msk.example:9198")),
                new Refusal(
                        "an image repository that names no registry",
                        "image.repository (image-worker) names no registry",
                        Map.of("image.repository", "image-worker", "image.pullPolicy", "Never"),
                        Map.of("image.pullPolicy", "")));
    }

    @ParameterizedTest
    @MethodSource("failGuards")
    void eachFailGuardRefusesWhatItShould(Refusal refusal) {
        HelmChart.render(DEFAULTS, refusal.base());
        Map<String, Object> values = new LinkedHashMap<>(refusal.base());
        values.putAll(refusal.offending());

        assertThat(HelmChart.refusal(DEFAULTS, values)).contains(refusal.message());
    }

    @Test
    void everyFailGuardHasItsCase() throws IOException {
        String guards = Files.readString(HelmChart.DIRECTORY.resolve("templates/_validate.tpl"));
        long fails = Pattern.compile("\\{\\{-? fail ").matcher(guards).results().count();

        assertThat(failGuards()).hasSize((int) fails);
    }

    // ---- values.schema.json: every rule refuses a value that breaks it

    /** A value that breaks one rule of the schema, and the JSON pointer Helm's schema error must name. */
    record Violation(String rule, String pointer, Map<String, Object> values) {
        @Override
        public String toString() {
            return rule + " at " + pointer;
        }
    }

    static List<Violation> schemaViolations() throws IOException {
        JsonNode schema =
                JSON.readTree(HelmChart.DIRECTORY.resolve("values.schema.json").toFile());
        JsonNode defaults = new YAMLMapper()
                .readTree(HelmChart.DIRECTORY.resolve("values.yaml").toFile());
        List<Violation> violations = new ArrayList<>();
        collect(schema, defaults, "", violations);
        return violations;
    }

    private static void collect(JsonNode schema, JsonNode defaults, String path, List<Violation> out) {
        String pointer = path.isEmpty() ? "" : "/" + path.replace('.', '/');
        if (!path.isEmpty()) {
            violation(schema, path, pointer).ifPresent(out::add);
        }
        if (schema.path("additionalProperties").isBoolean()
                && !schema.path("additionalProperties").asBoolean()) {
            out.add(new Violation("additionalProperties: false", pointer, Map.of(join(path, "notAValue"), "x")));
        }
        if (schema.path("items").has("required")) {
            out.add(new Violation(
                    "items required " + schema.path("items").get("required"),
                    pointer + "/0",
                    Map.of(path + "[0].notAValue", "x")));
        }
        for (JsonNode required : schema.path("required")) {
            // Required values with a default: removing the default (null deletes a key in Helm) breaks the rule.
            if (defaults != null && defaults.has(required.asText())) {
                out.add(new Violation(
                        "required " + required.asText(), pointer, Map.of(join(path, required.asText()), "null")));
            }
        }
        for (Iterator<Map.Entry<String, JsonNode>> it =
                        schema.path("properties").fields();
                it.hasNext(); ) {
            Map.Entry<String, JsonNode> property = it.next();
            collect(
                    property.getValue(),
                    defaults == null ? null : defaults.get(property.getKey()),
                    join(path, property.getKey()),
                    out);
        }
    }

    private static String join(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    /** A value of the property at {@code path} that breaks its own rules (enum, const, pattern, bounds, type). */
    private static java.util.Optional<Violation> violation(JsonNode schema, String path, String pointer) {
        if (schema.has("enum")) {
            return java.util.Optional.of(new Violation("enum", pointer, Map.of(path, "notOneOfThem")));
        }
        if (schema.has("const")) {
            JsonNode constant = schema.get("const");
            Object other = constant.isBoolean() ? !constant.asBoolean() : "notTheConstant";
            return java.util.Optional.of(new Violation("const", pointer, Map.of(path, other)));
        }
        if (schema.has("pattern")) {
            String bad = "not a valid value!";
            assertThat(bad).doesNotMatch(schema.get("pattern").asText());
            return java.util.Optional.of(new Violation("pattern", pointer, Map.of(path, bad)));
        }
        if (schema.has("minimum")) {
            return java.util.Optional.of(new Violation(
                    "minimum", pointer, Map.of(path, schema.get("minimum").asLong() - 1)));
        }
        if (schema.has("maximum")) {
            return java.util.Optional.of(new Violation(
                    "maximum", pointer, Map.of(path, schema.get("maximum").asLong() + 1)));
        }
        if (schema.has("minLength") && schema.get("minLength").asInt() > 0) {
            String shorter = "a".repeat(schema.get("minLength").asInt() - 1);
            return java.util.Optional.of(new Violation("minLength", pointer, Map.of(path, shorter)));
        }
        if (schema.has("maxLength")) {
            String longer = "a".repeat(schema.get("maxLength").asInt() + 1);
            return java.util.Optional.of(new Violation("maxLength", pointer, Map.of(path, longer)));
        }
        if (schema.has("oneOf")) {
            return java.util.Optional.of(new Violation("oneOf", pointer, Map.of(path, "neither")));
        }
        List<String> types = new ArrayList<>();
        schema.path("type").forEach(t -> types.add(t.asText()));
        if (schema.path("type").isTextual()) {
            types.add(schema.get("type").asText());
        }
        if (!types.isEmpty()) {
            Object wrong = types.contains("string") ? 12345 : "notOfThatType";
            return java.util.Optional.of(new Violation("type " + types, pointer, Map.of(path, wrong)));
        }
        return java.util.Optional.empty();
    }

    @ParameterizedTest
    @MethodSource("schemaViolations")
    void eachSchemaRuleRefusesAValueThatBreaksIt(Violation violation) {
        String message = HelmChart.refusal(DEFAULTS, violation.values());

        assertThat(message).contains("values don't meet the specifications of the schema");
        assertThat(message).contains("at '" + violation.pointer() + "'");
    }

    @Test
    void theSchemaRulesCoverTheInvariants() throws IOException {
        List<String> rules =
                schemaViolations().stream().map(Violation::toString).toList();

        assertThat(rules)
                .contains(
                        "const at /podSecurityContext/runAsNonRoot",
                        "const at /securityContext/readOnlyRootFilesystem",
                        "const at /securityContext/allowPrivilegeEscalation",
                        "required capabilities at /securityContext",
                        "required drop at /securityContext/capabilities",
                        "required seccompProfile at /podSecurityContext",
                        "enum at /podSecurityContext/seccompProfile/type",
                        "pattern at /readinessProbe/httpGet/path",
                        "additionalProperties: false at ");
    }

    /** Hardening cannot be switched off by a value: {@code null} deletes a default in Helm, so each is refused. */
    @ParameterizedTest
    @CsvSource({
        "securityContext.capabilities.drop, null, /securityContext/capabilities",
        "securityContext.capabilities, null, /securityContext",
        "securityContext.capabilities.drop[0], NET_RAW, /securityContext/capabilities/drop",
        "podSecurityContext.seccompProfile, null, /podSecurityContext",
        "podSecurityContext.seccompProfile.type, Unconfined, /podSecurityContext/seccompProfile/type"
    })
    void refusesValuesThatDropTheCapabilityDropOrTheSeccompProfile(String value, String setTo, String pointer) {
        String message = HelmChart.refusal(DEFAULTS, Map.of(value, setTo));

        assertThat(message).contains("values don't meet the specifications of the schema");
        assertThat(message).contains("at '" + pointer + "'");
        assertThat(HelmChart.render(DEFAULTS, Map.of())
                        .worker()
                        .getSecurityContext()
                        .getCapabilities()
                        .getDrop())
                .containsExactly("ALL");
        assertThat(HelmChart.render(DEFAULTS, Map.of())
                        .deployment()
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getSecurityContext()
                        .getSeccompProfile()
                        .getType())
                .isEqualTo("RuntimeDefault");
    }
}
