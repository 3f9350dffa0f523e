package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's production settings: topics as code (a hook Job, or Strimzi KafkaTopics), KEDA's reset policy,
 * activation and scale-down, the PodDisruptionBudget's eviction of unready pods, the JVM's processor count, the egress
 * NetworkPolicy and the image digest. Rendered with Helm's own library and read strictly, as in {@link HelmChartTest}.
 */
class HelmChartProductionTest {

    private static final Path DEFAULTS = HelmChart.DIRECTORY.resolve("ci/default-values.yaml");

    /** The container of the topics job (its only one). */
    private static Container containerOf(Job job) {
        return job.getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    private static Map<String, String> env(Container container) {
        return container.getEnv().stream()
                .filter(variable -> variable.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    }

    // ---- topics as code

    @Test
    void aHookJobCreatesTheTopicsBeforeThePodsStartWithDurableDefaults() {
        Rendering release = HelmChart.render(DEFAULTS, Map.of());
        Rendering withHooks = HelmChart.renderWithHooks(DEFAULTS, Map.of());

        assertThat(release.all(Job.class))
                .as("a hook, not part of the release's manifest")
                .isEmpty();
        Job job = withHooks.one(Job.class);
        assertThat(job.getMetadata().getAnnotations())
                .containsEntry(HelmChart.HOOK_PREFIX, "pre-install,pre-upgrade")
                .containsEntry(HelmChart.HOOK_PREFIX + "-delete-policy", "before-hook-creation,hook-succeeded");
        Container topics = containerOf(job);
        Map<String, Rendering.Variable> worker = release.environment();
        assertThat(env(topics))
                .containsEntry(
                        "BOOTSTRAP_SERVERS",
                        worker.get("KAFKA_BOOTSTRAP_SERVERS").value())
                .containsEntry(
                        "TOPICS",
                        String.join(
                                " ",
                                worker.get("IMAGE_WORKER_TOPIC_REQUEST").value() + ":6",
                                // Parking is on by default: its topic as many partitions as the request topic.
                                worker.get("IMAGE_WORKER_TOPIC_REQUEST_PARKED").value() + ":6",
                                worker.get("IMAGE_WORKER_TOPIC_COMPLETED").value() + ":6",
                                worker.get("IMAGE_WORKER_TOPIC_FAILED").value() + ":6",
                                worker.get("IMAGE_WORKER_TOPIC_DLQ").value() + ":1"))
                .containsEntry("REPLICATION_FACTOR", "3")
                .containsEntry("MIN_INSYNC_REPLICAS", "2");
        assertThat(String.join("\n", topics.getArgs()))
                .contains("--create --if-not-exists", "--alter --topic", "--add-config");
        WorkerInvariants.runsAsNonRootOnAReadOnlyRoot(
                job.getSpec().getTemplate().getSpec());
    }

    @Test
    void theTopicsOfContractOnePointOneAreCreatedWhenNamed() {
        Rendering withHooks = HelmChart.renderWithHooks(
                DEFAULTS,
                Map.of(
                        "kafka.topics.requestPriority",
                        "image-request-priority",
                        "kafka.topics.status",
                        "image-status"));

        Container topics = containerOf(withHooks.one(Job.class));
        assertThat(env(topics).get("TOPICS").split(" ")).contains("image-request-priority:6", "image-status:6");
    }

    @Test
    void theCancelTopicOfContractOnePointTwoIsOffUntilNamedThenCreatedCompactedAndDeletedByTime() {
        Map<String, Rendering.Variable> off =
                HelmChart.render(DEFAULTS, Map.of()).environment();
        assertThat(off.get("IMAGE_WORKER_TOPIC_CANCEL").value()).isEmpty();
        assertThat(off.get("IMAGE_WORKER_CANCEL_RETENTION").value()).isEqualTo("1h");

        Map<String, Object> values = Map.of("kafka.topics.cancel", "image-cancel", "cancel.retention", "2h");
        Rendering withHooks = HelmChart.renderWithHooks(DEFAULTS, values);
        Container topics = containerOf(withHooks.one(Job.class));
        assertThat(env(topics).get("TOPICS").split(" ")).contains("image-cancel:1");
        // Every requestId is new: compaction alone would keep every cancel. Deleted after twice the readers' look-back
        // (cancel.retention), a day at least.
        assertThat(env(topics))
                .containsEntry("CANCEL_TOPICS", "image-cancel")
                .containsEntry(
                        "CANCEL_RETENTION_MS", Long.toString(Duration.ofDays(1).toMillis()));
        assertThat(String.join("\n", topics.getArgs())).contains("cleanup.policy=compact,delete");
        Map<String, Rendering.Variable> on = HelmChart.render(DEFAULTS, values).environment();
        assertThat(on.get("IMAGE_WORKER_TOPIC_CANCEL").value()).isEqualTo("image-cancel");
        assertThat(on.get("IMAGE_WORKER_CANCEL_RETENTION").value()).isEqualTo("2h");

        List<StrictManifests.KafkaTopic> strimzi = HelmChart.renderWithHooks(
                        DEFAULTS,
                        Map.of(
                                "topics.create", "strimzi",
                                "topics.strimzi.cluster", "events",
                                "kafka.topics.cancel", "image-cancel"))
                .all(StrictManifests.KafkaTopic.class)
                .filter(topic -> topic.spec().topicName().equals("image-cancel"))
                .toList();
        assertThat(strimzi).hasSize(1);
        assertThat(strimzi.get(0).spec().partitions()).isEqualTo(1);
        assertThat(strimzi.get(0).spec().config())
                .containsEntry("cleanup.policy", "compact,delete")
                .containsEntry(
                        "retention.ms", Math.toIntExact(Duration.ofDays(1).toMillis()));

        // A look-back beyond half a day sets the retention to twice it, in each form the worker reads.
        for (Map.Entry<String, Duration> lookBack : Map.of(
                        "18h", Duration.ofHours(18),
                        "1.5d", Duration.ofHours(36),
                        "PT20H", Duration.ofHours(20),
                        "P1DT2H", Duration.ofHours(26))
                .entrySet()) {
            Container job = containerOf(HelmChart.renderWithHooks(
                            DEFAULTS,
                            Map.of("kafka.topics.cancel", "image-cancel", "cancel.retention", lookBack.getKey()))
                    .one(Job.class));
            assertThat(env(job))
                    .as(lookBack.getKey())
                    .containsEntry(
                            "CANCEL_RETENTION_MS",
                            Long.toString(lookBack.getValue().multipliedBy(2).toMillis()));
        }
    }

    @Test
    void theParkedTopicKeepsItsRecordsForAnExplicitRetention() {
        Container job =
                containerOf(HelmChart.renderWithHooks(DEFAULTS, Map.of()).one(Job.class));
        assertThat(env(job))
                .containsEntry("PARKED_TOPIC", "image-request-parked")
                .containsEntry(
                        "PARKED_RETENTION_MS", Long.toString(Duration.ofDays(7).toMillis()));

        List<StrictManifests.KafkaTopic> strimzi = HelmChart.renderWithHooks(
                        DEFAULTS,
                        Map.of(
                                "topics.create", "strimzi",
                                "topics.strimzi.cluster", "events",
                                "topics.parkedRetention", "96h"))
                .all(StrictManifests.KafkaTopic.class)
                .filter(topic -> topic.spec().topicName().equals("image-request-parked"))
                .toList();
        assertThat(strimzi).hasSize(1);
        assertThat(strimzi.get(0).spec().config())
                .containsEntry("cleanup.policy", "delete")
                .containsEntry(
                        "retention.ms", Math.toIntExact(Duration.ofHours(96).toMillis()));

        // With the spend guard, a request may wait two of its longest windows: the retention must cover them too.
        HelmChart.render(DEFAULTS, Map.of("budget.perProducer", "archive=10/2d", "topics.parkedRetention", "4d"));
        assertThat(HelmChart.refusal(
                        DEFAULTS, Map.of("budget.perProducer", "archive=10/2d", "topics.parkedRetention", "3d")))
                .contains("shorter than the longest a parked request may wait (345600000 ms");
        // Without parking there is nothing to keep.
        HelmChart.render(DEFAULTS, Map.of("kafka.topics.requestParked", "", "topics.parkedRetention", "1d"));
    }

    /**
     * The topic Job's script, run with stand-ins for Kafka's admin tools that log their arguments: each config goes to
     * the topic's creation and, for a topic that exists already, to {@code kafka-configs.sh}, a value holding commas
     * in square brackets there ({@code cleanup.policy=[compact,delete]}).
     */
    @Test
    void theTopicJobWritesEachConfigOnNewAndExistingTopicsCommasIncluded(@TempDir Path bin) throws Exception {
        Container job = containerOf(HelmChart.renderWithHooks(
                        DEFAULTS,
                        Map.of(
                                "kafka.topics.cancel", "image-cancel",
                                "budget.maxCalls", 100,
                                "topics.parkedRetention", "4d"))
                .one(Job.class));

        List<String> calls = runTopicJob(job, bin);
        assertThat(calls)
                .contains(
                        "kafka-topics.sh --bootstrap-server kafka.example.svc:9092 --create --if-not-exists --topic"
                                + " image-cancel --partitions 1 --replication-factor 3 --config min.insync.replicas=2"
                                + " --config cleanup.policy=compact,delete --config retention.ms=86400000",
                        "kafka-configs.sh --bootstrap-server kafka.example.svc:9092 --alter --entity-type topics"
                                + " --entity-name image-cancel --add-config"
                                + " min.insync.replicas=2,cleanup.policy=[compact,delete],retention.ms=86400000",
                        "kafka-configs.sh --bootstrap-server kafka.example.svc:9092 --alter --entity-type topics"
                                + " --entity-name image-request-parked --add-config"
                                + " min.insync.replicas=2,cleanup.policy=delete,retention.ms=345600000",
                        "kafka-configs.sh --bootstrap-server kafka.example.svc:9092 --alter --entity-type topics"
                                + " --entity-name image-worker-budget --add-config"
                                + " min.insync.replicas=2,cleanup.policy=delete,retention.ms=86400000",
                        "kafka-configs.sh --bootstrap-server kafka.example.svc:9092 --alter --entity-type topics"
                                + " --entity-name image-request --add-config min.insync.replicas=2");
    }

    /** Runs the topic job's script with stubs of Kafka's tools in {@code bin}; the calls it made to them. */
    private static List<String> runTopicJob(Container job, Path bin) throws Exception {
        Path log = bin.resolve("calls.log");
        for (String tool : List.of("kafka-topics.sh", "kafka-configs.sh")) {
            Path stub = bin.resolve(tool);
            Files.writeString(
                    stub,
                    "#!/bin/sh\necho \"$(basename \"$0\") $*\" >> '" + log + "'\n"
                            + "case \"$*\" in *--describe*) echo 'Topic: t PartitionCount: 6' ;; esac\n");
            Files.setPosixFilePermissions(stub, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        String script = String.join("\n", job.getArgs()).replace("/opt/kafka/bin", bin.toString());
        ProcessBuilder shell = new ProcessBuilder("/bin/sh", "-c", script).redirectErrorStream(true);
        shell.environment().putAll(env(job));
        Process process = shell.start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return Files.readAllLines(log);
    }

    /**
     * With producers taken from their topics (issue 49) the job creates each producer's request, priority and cancel
     * topics (the cancel ones compacted and deleted by time), not the shared ones, and KEDA watches each producer's
     * request topics, its formula taking the largest lag of them all.
     */
    @Test
    void withATopicPerProducerTheJobCreatesAndKedaWatchesEachProducersTopics(@TempDir Path bin) throws Exception {
        Map<String, Object> values = Map.of(
                "producerIdentity", "topic",
                "producers", "catalogue,edits",
                "kafka.topics.requestPriority", "image-request-priority",
                "kafka.topics.cancel", "image-cancel",
                "keda.enabled", true,
                "keda.pauseGuard.serverAddress", "http://prometheus.monitoring:9090");
        Container job = containerOf(HelmChart.renderWithHooks(DEFAULTS, values).one(Job.class));

        assertThat(env(job).get("TOPICS").split(" "))
                .contains(
                        "image-request.catalogue:6",
                        "image-request.edits:6",
                        "image-request-priority.catalogue:6",
                        "image-request-priority.edits:6",
                        "image-request-parked:6",
                        "image-cancel.catalogue:1",
                        "image-cancel.edits:1")
                .doesNotContain("image-request:6", "image-request-priority:6", "image-cancel:1");
        assertThat(env(job)).containsEntry("CANCEL_TOPICS", "image-cancel.catalogue image-cancel.edits");
        assertThat(runTopicJob(job, bin))
                .contains(
                        "kafka-configs.sh --bootstrap-server kafka.example.svc:9092 --alter --entity-type topics"
                                + " --entity-name image-cancel.edits --add-config"
                                + " min.insync.replicas=2,cleanup.policy=[compact,delete],retention.ms=86400000",
                        "kafka-configs.sh --bootstrap-server kafka.example.svc:9092 --alter --entity-type topics"
                                + " --entity-name image-request.catalogue --add-config min.insync.replicas=2");

        StrictManifests.ScaledObject scaler =
                HelmChart.render(DEFAULTS, values).one(StrictManifests.ScaledObject.class);
        Map<String, String> topics = new java.util.LinkedHashMap<>();
        scaler.spec().triggers().stream()
                .filter(trigger -> trigger.type().equals("kafka"))
                .forEach(
                        trigger -> topics.put(trigger.name(), trigger.metadata().get("topic")));
        assertThat(topics)
                .containsExactly(
                        Map.entry("request1", "image-request.catalogue"),
                        Map.entry("request2", "image-request.edits"),
                        Map.entry("priority1", "image-request-priority.catalogue"),
                        Map.entry("priority2", "image-request-priority.edits"),
                        Map.entry("parked", "image-request-parked"),
                        Map.entry("parkedBacklog", "image-request-parked"));
        String formula = scaler.spec()
                .advanced()
                .path("scalingModifiers")
                .path("formula")
                .asText();
        Map<String, Double> lags = new java.util.HashMap<>(Map.of(
                "request1", 0.0,
                "request2", 0.0,
                "priority1", 0.0,
                "priority2", 0.0,
                "parked", 0.0,
                "parkedBacklog", 0.0,
                "paused", 0.0));
        assertThat(KedaFormula.evaluate(formula, lags)).isZero();
        // One producer's backlog alone wakes the release and counts.
        lags.put("request2", 70.0);
        assertThat(KedaFormula.evaluate(formula, lags)).isEqualTo(70);
        lags.put("priority1", 90.0);
        assertThat(KedaFormula.evaluate(formula, lags)).isEqualTo(90);

        List<StrictManifests.KafkaTopic> strimzi = HelmChart.renderWithHooks(
                        DEFAULTS,
                        Map.of(
                                "producerIdentity", "topic",
                                "producers", "catalogue,edits",
                                "topics.create", "strimzi",
                                "topics.strimzi.cluster", "events",
                                "kafka.topics.cancel", "image-cancel"))
                .all(StrictManifests.KafkaTopic.class)
                .toList();
        assertThat(strimzi)
                .extracting(topic -> topic.spec().topicName())
                .contains(
                        "image-request.catalogue",
                        "image-request.edits",
                        "image-cancel.catalogue",
                        "image-cancel.edits")
                .doesNotContain("image-request", "image-cancel");
        assertThat(strimzi)
                .filteredOn(topic -> topic.spec().topicName().startsWith("image-cancel."))
                .allSatisfy(
                        topic -> assertThat(topic.spec().config()).containsEntry("cleanup.policy", "compact,delete"));
    }

    @Test
    void theProducersStatusTokensGoInTheSecretNeverInTheConfigMap() {
        String tokens = "catalogue=" + "c".repeat(40) + ",edits=" + "e".repeat(40);
        Rendering rendering = HelmChart.render(
                DEFAULTS,
                Map.of(
                        "producerIdentity", "topic",
                        "producers", "catalogue,edits",
                        "secret.existingSecret", "",
                        "secret.gatewayApiKey", "sk-x",
                        "secret.statusTokens", tokens));

        Rendering.Variable variable = rendering.environment().get("IMAGE_WORKER_STATUS_TOKENS");
        assertThat(variable.value()).isEqualTo(tokens);
        assertThat(variable.source()).isEqualTo(Rendering.Source.SECRET);
    }

    @Test
    void theTopicJobPodIsNotTakenForAWorker() {
        Rendering withHooks =
                HelmChart.renderWithHooks(DEFAULTS, Map.of("podDisruptionBudget.enabled", true, "replicaCount", 2));
        Map<String, String> jobPod =
                withHooks.one(Job.class).getSpec().getTemplate().getMetadata().getLabels();

        assertThat(jobPod)
                .doesNotContainEntry(
                        "app.kubernetes.io/name",
                        withHooks.one(Service.class).getSpec().getSelector().get("app.kubernetes.io/name"));
        assertThat(withHooks
                        .one(PodDisruptionBudget.class)
                        .getSpec()
                        .getSelector()
                        .getMatchLabels()
                        .entrySet())
                .isNotEmpty()
                .anyMatch(label -> !label.getValue().equals(jobPod.get(label.getKey())));
    }

    @Test
    void withACapTheJobCreatesTheSpendGuardsLogWithOnePartitionKeptByTime() {
        Rendering withHooks = HelmChart.renderWithHooks(
                DEFAULTS,
                Map.of(
                        "budget.maxCalls", 100,
                        "budget.window", "2d",
                        "topics.job.commandConfigSecret", "kafka-admin-client"));
        Job job = withHooks.one(Job.class);
        Container topics = containerOf(job);

        assertThat(env(topics).get("TOPICS")).endsWith(" image-worker-budget:1");
        assertThat(env(topics))
                .containsEntry("BUDGET_TOPIC", "image-worker-budget")
                .containsEntry("BUDGET_RETENTION_MS", Long.toString(4L * 24 * 3600 * 1000));
        assertThat(String.join("\n", topics.getArgs())).contains("cleanup.policy=delete");
        assertThat(topics.getVolumeMounts())
                .anyMatch(mount -> mount.getMountPath().equals("/etc/kafka-client"));
        assertThat(job.getSpec().getTemplate().getSpec().getVolumes())
                .anyMatch(volume -> volume.getSecret() != null
                        && volume.getSecret().getSecretName().equals("kafka-admin-client"));
    }

    @Test
    void withProducerCapsAloneTheJobCreatesTheLogKeptForTwoOfTheLongestWindows() {
        Rendering withHooks = HelmChart.renderWithHooks(
                DEFAULTS,
                Map.of(
                        "budget.perProducer", "catalogue=5000/1h,archive=10/3d",
                        "topics.job.commandConfigSecret", "kafka-admin-client"));
        Container topics = containerOf(withHooks.one(Job.class));

        assertThat(env(topics).get("TOPICS")).endsWith(" image-worker-budget:1");
        assertThat(env(topics)).containsEntry("BUDGET_RETENTION_MS", Long.toString(6L * 24 * 3600 * 1000));
    }

    @Test
    void strimziTopicsAreTheAlternativeAndOutliveTheRelease() {
        Rendering rendering = HelmChart.renderWithHooks(
                DEFAULTS,
                Map.of(
                        "topics.create", "strimzi",
                        "topics.strimzi.cluster", "events",
                        "topics.strimzi.namespace", "kafka",
                        "budget.maxCalls", 100));
        List<StrictManifests.KafkaTopic> topics =
                rendering.all(StrictManifests.KafkaTopic.class).toList();

        assertThat(rendering.all(Job.class)).isEmpty();
        assertThat(topics)
                .extracting(topic -> topic.spec().topicName())
                .containsExactly(
                        "image-request",
                        "image-request-parked",
                        "image-completed",
                        "image-failed",
                        "image-request-dlq",
                        "image-worker-budget");
        assertThat(topics).allSatisfy(topic -> {
            assertThat(topic.metadata().getLabels()).containsEntry("strimzi.io/cluster", "events");
            assertThat(topic.metadata().getNamespace()).isEqualTo("kafka");
            assertThat(topic.metadata().getAnnotations()).containsEntry("helm.sh/resource-policy", "keep");
            assertThat(topic.spec().replicas()).isEqualTo(3);
            assertThat(topic.spec().config()).containsEntry("min.insync.replicas", 2);
        });
        assertThat(topics.get(0).spec().partitions()).isEqualTo(6);
        assertThat(topics.get(1).spec().partitions()).as("the parked topic").isEqualTo(6);
        assertThat(topics.get(4).spec().partitions()).isEqualTo(1);
        assertThat(topics.get(5).spec().partitions()).isEqualTo(1);
        assertThat(topics.get(5).spec().config()).containsEntry("cleanup.policy", "delete");
    }

    @Test
    void noTopicsAreCreatedWhenTheyAreManagedElsewhere() {
        Rendering rendering = HelmChart.renderWithHooks(DEFAULTS, Map.of("topics.create", "none"));

        assertThat(rendering.all(Job.class)).isEmpty();
        assertThat(rendering.all(StrictManifests.KafkaTopic.class)).isEmpty();
    }

    // ---- scaling and disruption

    @Test
    void kedaCountsLagAsTheWorkerReadsAndScalesDownSlowly() throws IOException {
        StrictManifests.ScaledObject scaler =
                HelmChart.render(DEFAULTS, Map.of("keda.enabled", true)).one(StrictManifests.ScaledObject.class);

        assertThat(scaler.spec().triggers().get(0).metadata())
                .containsEntry("offsetResetPolicy", workerProperty("mp.messaging.incoming.requests.auto.offset.reset"))
                .containsEntry("activationLagThreshold", "0");
        var scaleDown = scaler.spec()
                .advanced()
                .path("horizontalPodAutoscalerConfig")
                .path("behavior")
                .path("scaleDown");
        assertThat(scaleDown.path("stabilizationWindowSeconds").asInt()).isEqualTo(600);
        assertThat(scaleDown.path("policies").get(0).path("type").asText()).isEqualTo("Pods");
        assertThat(scaleDown.path("policies").get(0).path("value").asInt()).isEqualTo(1);
        assertThat(scaleDown.path("policies").get(0).path("periodSeconds").asInt())
                .isEqualTo(300);
    }

    @Test
    void kedaWakesOnTheParkedTopicOnlyAboveItsCommitMarkersAndAddsPodsOnlyForPartitionsWithLag() {
        Map<String, Map<String, String>> triggers = kafkaTriggers(Map.of("keda.enabled", true));

        assertThat(triggers).containsOnlyKeys("request", "parked");
        assertThat(triggers.get("request"))
                .containsEntry("topic", "image-request")
                .containsEntry("activationLagThreshold", "0")
                .containsEntry("limitToPartitionsWithLag", "true")
                .doesNotContainKey("excludePersistentLag");
        // Written in transactions: a drained partition keeps up to one marker per replica parking into it.
        assertThat(triggers.get("parked"))
                .containsEntry("topic", "image-request-parked")
                .containsEntry("activationLagThreshold", Integer.toString(6 * 3))
                .containsEntry("limitToPartitionsWithLag", "true")
                .containsEntry("excludePersistentLag", "true");
        assertThat(kafkaTriggers(Map.of("keda.enabled", true, "keda.maxReplicaCount", 6))
                        .get("parked"))
                .containsEntry("activationLagThreshold", "36");
        assertThat(kafkaTriggers(Map.of("keda.enabled", true, "keda.parkedActivationLagThreshold", 4))
                        .get("parked"))
                .containsEntry("activationLagThreshold", "4");
        assertThat(kafkaTriggers(Map.of(
                                "keda.enabled", true,
                                "kafka.topics.requestParked", "",
                                "kafka.topics.requestPriority", "image-request-priority"))
                        .get("priority"))
                .containsEntry("activationLagThreshold", "0")
                .containsEntry("limitToPartitionsWithLag", "true");
        // The parked topic is a trigger's and the topic job's: extraEnv cannot move the worker away from it.
        assertThat(HelmChart.refusal(
                        DEFAULTS,
                        Map.of(
                                "extraEnv[0].name", "IMAGE_WORKER_TOPIC_REQUEST_PARKED",
                                "extraEnv[0].value", "elsewhere")))
                .contains("extraEnv must not set IMAGE_WORKER_TOPIC_REQUEST_PARKED");
        StrictManifests.ScaledObject withoutGuard =
                HelmChart.render(DEFAULTS, Map.of("keda.enabled", true)).one(StrictManifests.ScaledObject.class);
        assertThat(withoutGuard.spec().advanced().has("scalingModifiers")).isFalse();
    }

    private static Map<String, Map<String, String>> kafkaTriggers(Map<String, Object> values) {
        Map<String, Map<String, String>> triggers = new java.util.LinkedHashMap<>();
        HelmChart.render(DEFAULTS, values)
                .one(StrictManifests.ScaledObject.class)
                .spec()
                .triggers()
                .forEach(trigger -> {
                    assertThat(trigger.type()).isEqualTo("kafka");
                    triggers.put(trigger.name(), trigger.metadata());
                });
        return triggers;
    }

    /**
     * With a Prometheus that scrapes the pods, the release does not scale out while they are paused: the formula KEDA
     * runs (read here by {@link KedaFormula}) gives at most one pod's worth of lag while a pod reports a pause, keeps
     * the triggers' activation thresholds (the parked topic's whole lag against its markers), and otherwise the most
     * lag any trigger reports, as the autoscaler would scale on without a formula.
     */
    @Test
    void thePauseGuardHoldsTheReleaseAtOnePodWhileIntakeIsPaused() {
        StrictManifests.ScaledObject scaler = HelmChart.render(
                        DEFAULTS,
                        Map.of(
                                "keda.enabled",
                                true,
                                "keda.minReplicaCount",
                                0,
                                "kafka.topics.requestPriority",
                                "image-request-priority",
                                "keda.pauseGuard.serverAddress",
                                "http://prometheus.monitoring:9090"))
                .one(StrictManifests.ScaledObject.class);
        Map<String, StrictManifests.ScaledObject.Trigger> triggers = new java.util.LinkedHashMap<>();
        scaler.spec().triggers().forEach(trigger -> triggers.put(trigger.name(), trigger));

        assertThat(triggers).containsOnlyKeys("request", "priority", "parked", "parkedBacklog", "paused");
        StrictManifests.ScaledObject.Trigger paused = triggers.get("paused");
        assertThat(paused.type()).isEqualTo("prometheus");
        assertThat(paused.metadata())
                .containsEntry("serverAddress", "http://prometheus.monitoring:9090")
                .containsEntry(
                        "query",
                        "max(clamp_max(image_worker_intake_paused{namespace=\"image-worker\",service=\"image-worker\"}"
                                + " + image_worker_budget_held_requests{namespace=\"image-worker\",service=\"image-worker\"},"
                                + " 1))");
        assertThat(triggers.get("parkedBacklog").metadata())
                .containsEntry("topic", "image-request-parked")
                .containsEntry("activationLagThreshold", "18")
                .doesNotContainKeys("excludePersistentLag", "limitToPartitionsWithLag");
        var modifiers = scaler.spec().advanced().path("scalingModifiers");
        assertThat(modifiers.path("target").asText()).isEqualTo("32");
        assertThat(modifiers.path("activationTarget").asText()).isEqualTo("0");
        assertThat(modifiers.path("metricType").asText()).isEqualTo("AverageValue");
        String formula = modifiers.path("formula").asText();

        // Nothing but commit markers (18 at most, the parked trigger leaves them out of its metric): 0, inactive.
        assertThat(composite(formula, 0, 0, 0, 18, 0)).isZero();
        // A request waiting wakes the release; so does a parked backlog above the markers, even unmoving.
        assertThat(composite(formula, 1, 0, 0, 0, 0)).isEqualTo(1);
        assertThat(composite(formula, 0, 0, 0, 19, 0)).isEqualTo(1);
        // Working: the largest lag, as without a formula (here 6 pods' worth).
        assertThat(composite(formula, 100, 192, 40, 300, 0)).isEqualTo(192);
        // Paused: one pod's worth, whatever the lag; and nothing at all without lag.
        assertThat(composite(formula, 100, 192, 40, 300, 1)).isEqualTo(32);
        assertThat(composite(formula, 0, 0, 0, 19, 1)).isEqualTo(1);
        assertThat(composite(formula, 0, 0, 0, 5, 1)).isZero();
    }

    private static double composite(
            String formula, double request, double priority, double parked, double parkedBacklog, double paused) {
        return KedaFormula.evaluate(
                formula,
                Map.of(
                        "request", request,
                        "priority", priority,
                        "parked", parked,
                        "parkedBacklog", parkedBacklog,
                        "paused", paused));
    }

    @Test
    void theNotesNameEveryTriggerAndWhetherAPauseScalesOut() {
        String notes = HelmChart.notes(
                DEFAULTS, Map.of("keda.enabled", true, "kafka.topics.requestPriority", "image-request-priority"));
        String guarded = HelmChart.notes(
                DEFAULTS, Map.of("keda.enabled", true, "keda.pauseGuard.serverAddress", "http://prometheus:9090"));

        assertThat(notes)
                .contains("image-request (wakes the release above a lag of 0)")
                .contains("image-request-priority (wakes the release above a lag of 0)")
                .contains("image-request-parked (written in transactions: wakes the release above a lag of 18")
                .contains("the request lag still adds pods")
                .contains("image-request-parked keeps its records 7d");
        assertThat(guarded).contains("the release holds at one pod");
    }

    private static String workerProperty(String name) throws IOException {
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(Path.of("src/main/resources/application.properties"))) {
            properties.load(in);
        }
        return properties.getProperty(name);
    }

    @Test
    void theDisruptionBudgetLetsUnreadyPodsGoSoThatDrainsDoNotWaitForAnOutage() {
        PodDisruptionBudget pdb = HelmChart.render(DEFAULTS, Map.of("podDisruptionBudget.enabled", true))
                .one(PodDisruptionBudget.class);
        PodDisruptionBudget unset = HelmChart.render(
                        DEFAULTS,
                        Map.of(
                                "podDisruptionBudget.enabled",
                                true,
                                "podDisruptionBudget.unhealthyPodEvictionPolicy",
                                ""))
                .one(PodDisruptionBudget.class);

        assertThat(pdb.getSpec().getUnhealthyPodEvictionPolicy()).isEqualTo("AlwaysAllow");
        assertThat(unset.getSpec().getUnhealthyPodEvictionPolicy()).isNull();
    }

    @Test
    void theJvmIsSizedForTwoProcessorsNotTheNode() {
        Map<String, Rendering.Variable> sized =
                HelmChart.render(DEFAULTS, Map.of()).environment();
        Map<String, Rendering.Variable> unsized = HelmChart.render(DEFAULTS, Map.of("jvm.activeProcessorCount", "null"))
                .environment();
        Map<String, Rendering.Variable> more = HelmChart.render(
                        DEFAULTS, Map.of("jvm.activeProcessorCount", 4, "jvm.extraOpts", "-XX:+ExitOnOutOfMemoryError"))
                .environment();

        assertThat(sized.get("JAVA_OPTS_APPEND").value())
                .startsWith("-Dquarkus.http.host=0.0.0.0 -Djava.util.logging.manager=org.jboss.logmanager.LogManager")
                .endsWith(" -XX:ActiveProcessorCount=2");
        assertThat(unsized.get("JAVA_OPTS_APPEND").value())
                .isEqualTo("-Dquarkus.http.host=0.0.0.0 -Djava.util.logging.manager=org.jboss.logmanager.LogManager");
        assertThat(more.get("JAVA_OPTS_APPEND").value())
                .endsWith(" -XX:ActiveProcessorCount=4 -XX:+ExitOnOutOfMemoryError");
    }

    // ---- egress

    @Test
    void theNetworkPolicyAllowsEgressOnlyWhereTheWorkerHasBusiness() {
        Rendering rendering = HelmChart.render(
                DEFAULTS,
                Map.of(
                        "networkPolicy.enabled", true,
                        "networkPolicy.kafka.to[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name",
                                "kafka",
                        "networkPolicy.gateway.to[0].ipBlock.cidr", "203.0.113.10/32"));
        NetworkPolicy policy = rendering.one(NetworkPolicy.class);

        assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Egress");
        assertThat(policy.getSpec().getPodSelector().getMatchLabels())
                .isEqualTo(rendering.deployment().getSpec().getSelector().getMatchLabels());
        List<NetworkPolicyEgressRule> rules = policy.getSpec().getEgress();
        assertThat(rules).hasSize(5);
        assertThat(ports(rules.get(0))).containsExactly("UDP/53", "TCP/53");
        assertThat(ports(rules.get(1))).containsExactly("TCP/9092", "TCP/9093", "TCP/9094", "TCP/9096", "TCP/9098");
        assertThat(rules.get(1).getTo()).singleElement().satisfies(peer -> assertThat(
                        peer.getNamespaceSelector().getMatchLabels())
                .containsEntry("kubernetes.io/metadata.name", "kafka"));
        assertThat(ports(rules.get(2))).containsExactly("TCP/443");
        assertThat(rules.get(3).getTo())
                .singleElement()
                .satisfies(peer -> assertThat(peer.getIpBlock().getCidr()).isEqualTo("203.0.113.10/32"));
        assertThat(HelmChart.render(DEFAULTS, Map.of()).all(NetworkPolicy.class))
                .isEmpty();
    }

    /**
     * {@code GET /requests/{id}} answers for any request by id, unauthenticated, on the {@code http} port: with {@code
     * networkPolicy.ingress.enabled} that port is reached only from the peers named and the release's {@code helm test}
     * pod; without it, ingress is left alone.
     */
    @Test
    void theNetworkPolicyCanRestrictWhoReachesTheHttpPort() {
        Rendering withHooks = HelmChart.renderWithHooks(
                DEFAULTS,
                Map.of(
                        "networkPolicy.enabled", true,
                        "networkPolicy.ingress.enabled", true,
                        "networkPolicy.ingress.from[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name",
                                "monitoring"));
        NetworkPolicy policy =
                withHooks.named(NetworkPolicy.class, HelmChart.RELEASE).orElseThrow();
        Map<String, String> testPod = withHooks
                .named(Pod.class, HelmChart.RELEASE + "-test-health")
                .orElseThrow()
                .getMetadata()
                .getLabels();

        assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
        assertThat(policy.getSpec().getIngress()).singleElement().satisfies(rule -> {
            assertThat(rule.getPorts()).singleElement().satisfies(port -> {
                assertThat(port.getProtocol()).isEqualTo("TCP");
                assertThat(port.getPort().getStrVal()).isEqualTo("http");
            });
            assertThat(rule.getFrom()).hasSize(2);
            assertThat(selects(rule.getFrom().get(0).getPodSelector().getMatchLabels(), testPod))
                    .isTrue();
            assertThat(rule.getFrom().get(1).getNamespaceSelector().getMatchLabels())
                    .containsEntry("kubernetes.io/metadata.name", "monitoring");
        });
        assertThat(HelmChart.render(DEFAULTS, Map.of("networkPolicy.enabled", true))
                        .one(NetworkPolicy.class)
                        .getSpec()
                        .getPolicyTypes())
                .containsExactly("Egress");
    }

    /**
     * {@code helm test} behind the NetworkPolicy: the test pod used to carry the workers' selector labels, so the
     * workers' egress policy held it (no rule lets a worker reach a worker), and the Service and the PDB counted it.
     */
    @Test
    void theHelmTestPodIsNoWorkerAndItsOwnPolicyLetsItReachTheWorkers() {
        Rendering withHooks = HelmChart.renderWithHooks(
                DEFAULTS,
                Map.of("networkPolicy.enabled", true, "podDisruptionBudget.enabled", true, "replicaCount", 2));
        Pod test =
                withHooks.named(Pod.class, HelmChart.RELEASE + "-test-health").orElseThrow();
        Map<String, String> labels = test.getMetadata().getLabels();
        Map<String, String> workers =
                withHooks.deployment().getSpec().getSelector().getMatchLabels();

        assertThat(selects(withHooks.one(Service.class).getSpec().getSelector(), labels))
                .isFalse();
        assertThat(selects(
                        withHooks
                                .one(PodDisruptionBudget.class)
                                .getSpec()
                                .getSelector()
                                .getMatchLabels(),
                        labels))
                .isFalse();
        NetworkPolicy workersPolicy =
                withHooks.named(NetworkPolicy.class, HelmChart.RELEASE).orElseThrow();
        assertThat(selects(workersPolicy.getSpec().getPodSelector().getMatchLabels(), labels))
                .isFalse();
        assertThat(labels).containsEntry("app.kubernetes.io/instance", HelmChart.RELEASE);

        NetworkPolicy testPolicy = withHooks
                .named(NetworkPolicy.class, HelmChart.RELEASE + "-test-health")
                .orElseThrow();
        assertThat(testPolicy.getMetadata().getAnnotations())
                .containsEntry(HelmChart.HOOK_PREFIX, "test")
                .containsEntry(HelmChart.HOOK_PREFIX + "-weight", "-1");
        assertThat(selects(testPolicy.getSpec().getPodSelector().getMatchLabels(), labels))
                .isTrue();
        List<NetworkPolicyEgressRule> rules = testPolicy.getSpec().getEgress();
        assertThat(rules).hasSize(2);
        assertThat(ports(rules.get(0))).containsExactly("UDP/53", "TCP/53");
        assertThat(rules.get(1).getPorts()).singleElement().satisfies(port -> assertThat(
                        port.getPort().getStrVal())
                .isEqualTo(withHooks.worker().getPorts().get(0).getName()));
        assertThat(rules.get(1).getTo()).singleElement().satisfies(peer -> assertThat(
                        peer.getPodSelector().getMatchLabels())
                .isEqualTo(workers));
        assertThat(HelmChart.renderWithHooks(DEFAULTS, Map.of()).all(NetworkPolicy.class))
                .isEmpty();
    }

    /** Whether a label selector's {@code matchLabels} select a pod with {@code labels}. */
    private static boolean selects(Map<String, String> selector, Map<String, String> labels) {
        return labels.entrySet().containsAll(selector.entrySet());
    }

    @Test
    void tracingOnSendsSpansToTheCollectorAndTheNetworkPolicyLetsThemThrough() {
        Rendering off = HelmChart.render(DEFAULTS, Map.of("networkPolicy.enabled", true));
        Rendering on = HelmChart.render(
                DEFAULTS,
                Map.of(
                        "networkPolicy.enabled", true,
                        "tracing.enabled", true,
                        "tracing.endpoint", "http://otel-collector.observability:4317",
                        "tracing.sampler", "parentbased_traceidratio",
                        "tracing.samplerArg", "0.1",
                        "networkPolicy.otlp.to[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name",
                                "observability"));

        assertThat(off.environment())
                .doesNotContainKeys("QUARKUS_OTEL_SDK_DISABLED", "QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT");
        assertThat(off.one(NetworkPolicy.class).getSpec().getEgress()).hasSize(5);
        assertThat(on.environment().get("QUARKUS_OTEL_SDK_DISABLED").value()).isEqualTo("false");
        assertThat(on.environment().get("QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT").value())
                .isEqualTo("http://otel-collector.observability:4317");
        assertThat(on.environment().get("QUARKUS_OTEL_TRACES_SAMPLER").value()).isEqualTo("parentbased_traceidratio");
        assertThat(on.environment().get("QUARKUS_OTEL_TRACES_SAMPLER_ARG").value())
                .isEqualTo("0.1");
        List<NetworkPolicyEgressRule> rules =
                on.one(NetworkPolicy.class).getSpec().getEgress();
        assertThat(rules).hasSize(6);
        assertThat(ports(rules.get(4))).containsExactly("TCP/4317");
        assertThat(rules.get(4).getTo()).singleElement().satisfies(peer -> assertThat(
                        peer.getNamespaceSelector().getMatchLabels())
                .containsEntry("kubernetes.io/metadata.name", "observability"));
    }

    @Test
    void theReferenceHostsGetARuleOnlyWhenEditsMayFetchFromThem() {
        NetworkPolicy policy = HelmChart.render(
                        DEFAULTS,
                        Map.of(
                                "networkPolicy.enabled", true,
                                "reference.allowedHosts[0]", "cdn.example.com",
                                "networkPolicy.references.to[0].ipBlock.cidr", "198.51.100.0/24"))
                .one(NetworkPolicy.class);

        assertThat(policy.getSpec().getEgress()).hasSize(6);
        assertThat(policy.getSpec()
                        .getEgress()
                        .get(4)
                        .getTo()
                        .get(0)
                        .getIpBlock()
                        .getCidr())
                .isEqualTo("198.51.100.0/24");
    }

    /**
     * The gateway may answer with a {@code url} whatever was asked, and that download comes after the call was billed:
     * with the policy on, the pods reach public addresses on 443 for it (never private, loopback, link-local or
     * carrier-grade NAT ones, which the worker refuses for them too), unless turned off or narrowed.
     */
    @Test
    void returnedUrlsOnOtherHostsThanTheGatewaysMayBeDownloadedFromPublicAddresses() {
        NetworkPolicyEgressRule downloads = egress(Map.of()).get(4);

        assertThat(ports(downloads)).containsExactly("TCP/443");
        assertThat(downloads.getTo()).hasSize(2);
        assertThat(downloads.getTo().get(0).getIpBlock().getCidr()).isEqualTo("0.0.0.0/0");
        assertThat(downloads.getTo().get(0).getIpBlock().getExcept())
                .contains("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10");
        assertThat(downloads.getTo().get(1).getIpBlock().getCidr()).isEqualTo("::/0");
        assertThat(downloads.getTo().get(1).getIpBlock().getExcept()).contains("fc00::/7", "fe80::/10");

        assertThat(egress(Map.of("networkPolicy.downloads.enabled", false))).hasSize(4);
        assertThat(egress(Map.of("networkPolicy.downloads.to[0].ipBlock.cidr", "192.0.2.0/24"))
                        .get(4)
                        .getTo())
                .singleElement()
                .satisfies(peer -> assertThat(peer.getIpBlock().getCidr()).isEqualTo("192.0.2.0/24"));
    }

    /**
     * DNS beyond kube-dns: OpenShift's DNS pods answer on 5353 behind their Service's 53 (the policy sees the pod's
     * port); NodeLocal DNSCache (and Cloud DNS for GKE) answer on the node's own link-local address, where no pod
     * selector finds them.
     */
    @Test
    void dnsReachesOpenShiftsResolverAndANodeLocalCacheWhenAsked() {
        List<NetworkPolicyEgressRule> openshift = egress(Map.of("networkPolicy.dns.openshift", true));
        assertThat(openshift).hasSize(6);
        assertThat(ports(openshift.get(1))).contains("UDP/5353", "TCP/5353", "UDP/53", "TCP/53");
        assertThat(openshift.get(1).getTo()).singleElement().satisfies(peer -> assertThat(
                        peer.getNamespaceSelector().getMatchLabels())
                .containsEntry("kubernetes.io/metadata.name", "openshift-dns"));

        List<NetworkPolicyEgressRule> nodeLocal = egress(Map.of("networkPolicy.dns.nodeLocal.enabled", true));
        assertThat(nodeLocal).hasSize(5);
        assertThat(ports(nodeLocal.get(0))).containsExactly("UDP/53", "TCP/53");
        assertThat(nodeLocal.get(0).getTo()).hasSize(2);
        assertThat(nodeLocal.get(0).getTo().get(0).getPodSelector().getMatchLabels())
                .containsEntry("k8s-app", "kube-dns");
        assertThat(nodeLocal.get(0).getTo().get(1).getIpBlock().getCidr()).isEqualTo("169.254.20.10/32");
        assertThat(egress(Map.of(
                                "networkPolicy.dns.nodeLocal.enabled",
                                true,
                                "networkPolicy.dns.nodeLocal.addresses[0]",
                                "169.254.169.254/32"))
                        .get(0)
                        .getTo()
                        .get(1)
                        .getIpBlock()
                        .getCidr())
                .isEqualTo("169.254.169.254/32");
        assertThat(egress(Map.of()).get(0).getTo()).hasSize(1);
    }

    /**
     * S3 credentials on EKS, once the store's addresses are pinned: Pod Identity's agent on the node (169.254.170.23,
     * fd00:ec2::23, port 80), or STS for IRSA (443; any address unless an interface endpoint's are given).
     */
    @Test
    void theAwsSdkReachesPodIdentitysAgentOrStsWhenAsked() {
        List<NetworkPolicyEgressRule> podIdentity = egress(Map.of("networkPolicy.eksPodIdentity.enabled", true));
        assertThat(podIdentity).hasSize(6);
        assertThat(ports(podIdentity.get(5))).containsExactly("TCP/80");
        assertThat(podIdentity.get(5).getTo())
                .extracting(peer -> peer.getIpBlock().getCidr())
                .containsExactly("169.254.170.23/32", "fd00:ec2::23/128");

        List<NetworkPolicyEgressRule> sts = egress(Map.of("networkPolicy.sts.enabled", true));
        assertThat(sts).hasSize(6);
        assertThat(ports(sts.get(5))).containsExactly("TCP/443");
        assertThat(sts.get(5).getTo()).as("STS's public addresses change: any").isNullOrEmpty();
        assertThat(egress(Map.of(
                                "networkPolicy.sts.enabled",
                                true,
                                "networkPolicy.sts.to[0].ipBlock.cidr",
                                "10.0.12.0/24"))
                        .get(5)
                        .getTo())
                .singleElement()
                .satisfies(peer -> assertThat(peer.getIpBlock().getCidr()).isEqualTo("10.0.12.0/24"));
    }

    /** GKE's metadata server: 169.254.169.254:80 as dialled (Dataplane V2), 169.254.169.252:988 after the node's NAT. */
    @Test
    void theGkeMetadataServerIsReachableWhenAsked() {
        List<NetworkPolicyEgressRule> rules = egress(Map.of("networkPolicy.gkeMetadataServer.enabled", true));

        assertThat(rules).hasSize(7);
        assertThat(ports(rules.get(5))).containsExactly("TCP/80");
        assertThat(rules.get(5).getTo())
                .singleElement()
                .satisfies(peer -> assertThat(peer.getIpBlock().getCidr()).isEqualTo("169.254.169.254/32"));
        assertThat(ports(rules.get(6))).containsExactly("TCP/988");
        assertThat(rules.get(6).getTo())
                .singleElement()
                .satisfies(peer -> assertThat(peer.getIpBlock().getCidr()).isEqualTo("169.254.169.252/32"));
    }

    /**
     * A port the worker dials that its rule leaves out would fail only at run time (Kafka never connects, an upload
     * fails after its call was billed): the chart refuses it. Amazon MSK's ports are in the brokers' rule by default.
     */
    @Test
    void aPortTheWorkerDialsOutsideItsRuleIsRefused() {
        for (String msk : List.of("b-1.msk.example:9094", "b-1.msk.example:9096,b-2.msk.example:9096", "b-1:9098")) {
            assertThat(egress(Map.of("kafka.bootstrapServers", msk))).isNotEmpty();
        }
        assertThat(HelmChart.refusal(
                        DEFAULTS,
                        Map.of("networkPolicy.enabled", true, "kafka.bootstrapServers", "b-1.msk.example:9198")))
                .contains("networkPolicy.kafka.ports (9092, 9093, 9094, 9096, 9098) leaves out port 9198 of"
                        + " kafka.bootstrapServers (b-1.msk.example:9198)");
        assertThat(HelmChart.refusal(
                        DEFAULTS,
                        Map.of("networkPolicy.enabled", true, "gateway.baseUrl", "https://gateway.example.com:8443")))
                .contains("networkPolicy.gateway.ports (443) leaves out port 8443 of gateway.baseUrl");
        assertThat(HelmChart.refusal(
                        DEFAULTS, Map.of("networkPolicy.enabled", true, "storage.endpoint", "http://minio.minio:9000")))
                .contains("networkPolicy.objectStore.ports (443) leaves out port 9000 of storage.endpoint");
        assertThat(egress(Map.of(
                        "storage.endpoint", "http://minio.minio:9000", "networkPolicy.objectStore.ports[0]", 9000)))
                .isNotEmpty();
        assertThat(HelmChart.render(DEFAULTS, Map.of("storage.endpoint", "http://minio.minio:9000"))
                        .all(NetworkPolicy.class))
                .as("no policy, nothing to refuse")
                .isEmpty();
    }

    /** The egress rules of the policy rendered with the defaults, the policy on, and {@code values}. */
    private static List<NetworkPolicyEgressRule> egress(Map<String, Object> values) {
        Map<String, Object> sets = new LinkedHashMap<>(values);
        sets.put("networkPolicy.enabled", true);
        return HelmChart.render(DEFAULTS, sets)
                .one(NetworkPolicy.class)
                .getSpec()
                .getEgress();
    }

    private static List<String> ports(NetworkPolicyEgressRule rule) {
        return rule.getPorts().stream()
                .map(port -> port.getProtocol() + "/" + port.getPort().getIntVal())
                .toList();
    }

    // ---- logs

    @Test
    void logsAreJsonForTheClustersPipelineUnlessTurnedOff() {
        assertThat(HelmChart.render(DEFAULTS, Map.of())
                        .environment()
                        .get("IMAGE_WORKER_LOG_JSON")
                        .value())
                .isEqualTo("true");
        assertThat(HelmChart.render(DEFAULTS, Map.of("logging.json", false))
                        .environment()
                        .get("IMAGE_WORKER_LOG_JSON")
                        .value())
                .isEqualTo("false");
    }

    // ---- the image

    /**
     * The chart's default repository names no registry: the nodes would pull docker.io/library/image-worker, which is
     * not this image, and every pod would wait in ImagePullBackOff. Refused, unless the image is said to be on the
     * nodes already (kind, minikube).
     */
    @Test
    void aRepositoryWithoutARegistryIsRefusedUnlessTheImageIsOnTheNodes() {
        assertThat(HelmChart.refusal(DEFAULTS, Map.of("image.repository", "image-worker")))
                .contains("image.repository (image-worker) names no registry")
                .contains("docker.io/library/image-worker")
                .contains("-Dimage.name=REGISTRY/image-worker:TAG -Dimage.push=true");
        assertThat(HelmChart.refusal(DEFAULTS, Map.of("image.repository", "image-worker", "image.tag", "1.0.0")))
                .contains("names no registry");
        for (String policy : List.of("Never", "IfNotPresent")) {
            assertThat(HelmChart.render(
                                    DEFAULTS, Map.of("image.repository", "image-worker", "image.pullPolicy", policy))
                            .worker()
                            .getImage())
                    .startsWith("image-worker:");
        }
        assertThat(HelmChart.render(DEFAULTS, Map.of("image.repository", "localhost:5000/image-worker"))
                        .worker()
                        .getImage())
                .startsWith("localhost:5000/image-worker:");
    }

    /** The values file names no build option that does not exist (it once said -Dimage.registry). */
    @Test
    void theValuesNameTheImageProfilesRealOptions() throws IOException {
        String values = Files.readString(HelmChart.DIRECTORY.resolve("values.yaml"));
        String pom = Files.readString(Path.of("pom.xml"));

        Matcher options = Pattern.compile("-D(image\\.[a-z]+)=").matcher(values);
        int found = 0;
        while (options.find()) {
            assertThat(pom).as(options.group(1)).contains("<" + options.group(1) + ">");
            found++;
        }
        assertThat(found).isPositive();
    }

    @Test
    void aDigestPinsTheImageAndAMovingTagIsAlwaysPulled() {
        String digest = "sha256:" + "ab".repeat(32);
        Container pinned = HelmChart.render(
                        DEFAULTS, Map.of("image.repository", "registry.example.com/iw", "image.digest", digest))
                .worker();
        Container snapshot = HelmChart.render(DEFAULTS, Map.of()).worker();
        Container release =
                HelmChart.render(DEFAULTS, Map.of("image.tag", "1.0.0")).worker();
        Container chosen =
                HelmChart.render(DEFAULTS, Map.of("image.pullPolicy", "Never")).worker();

        assertThat(pinned.getImage()).isEqualTo("registry.example.com/iw@" + digest);
        assertThat(pinned.getImagePullPolicy()).isEqualTo("IfNotPresent");
        assertThat(snapshot.getImage()).endsWith("-SNAPSHOT");
        assertThat(snapshot.getImagePullPolicy()).isEqualTo("Always");
        assertThat(release.getImagePullPolicy()).isEqualTo("IfNotPresent");
        assertThat(chosen.getImagePullPolicy()).isEqualTo("Never");
    }
}
