package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code docker-compose.yml} and the Dockerfiles, checked by reading them: this machine (and CI) has no Docker engine,
 * so {@code docker compose up} itself is not run by any test.
 */
class ComposeFileTest {

    /** An image named by digest: {@code <name>:<tag>@sha256:<64 hex>}. */
    private static final String DIGEST = "@sha256:[0-9a-f]{64}";

    private static final String WORKER = "image-worker";
    private final ComposeFile compose = ComposeFile.read();

    @Test
    void theWorkerReadsEveryVariableComposeSets() {
        assertThat(WorkerEnvironment.known())
                .containsAll(compose.environment(WORKER).keySet());
        assertThat(WorkerEnvironment.known()).containsAll(demoSettings().keySet());
    }

    @Test
    void theGatewaySettingsComeFromTheHostNeverFromTheFile() {
        Map<String, String> environment = compose.environment(WORKER);

        for (String name : WorkerEnvironment.REQUIRED) {
            assertThat(environment).containsKey(name);
        }
        for (String name : List.of(
                "IMAGE_WORKER_GATEWAY_BASE_URL", "IMAGE_WORKER_GATEWAY_API_KEY", "IMAGE_WORKER_GATEWAY_MODEL")) {
            assertThat(environment.get(name)).isEqualTo("${" + name + ":-}");
        }
    }

    @Test
    void everyDependencyWaitsUntilItIsHealthyOrDone() {
        compose.root().path("services").fields().forEachRemaining(service -> service.getValue()
                .path("depends_on")
                .fields()
                .forEachRemaining(dependency -> {
                    String condition = dependency.getValue().path("condition").asText();
                    assertThat(condition)
                            .as("%s waits for %s", service.getKey(), dependency.getKey())
                            .isIn("service_healthy", "service_completed_successfully");
                    if (condition.equals("service_healthy")) {
                        assertThat(compose.service(dependency.getKey()).has("healthcheck"))
                                .as("%s has a healthcheck", dependency.getKey())
                                .isTrue();
                    }
                }));
    }

    @Test
    void everyLongRunningServiceHasAMemoryLimit() {
        compose.root().path("services").fields().forEachRemaining(service -> assertThat(service.getValue()
                        .path("deploy")
                        .path("resources")
                        .path("limits")
                        .path("memory")
                        .asText())
                .as(service.getKey())
                .isNotBlank());
    }

    @Test
    void stoppingLeavesTheDrainItsTime() {
        Duration drain = WorkerEnvironment.duration(compose.environment(WORKER).get("IMAGE_WORKER_SHUTDOWN_GRACE"));
        Duration stop = WorkerEnvironment.duration(
                compose.service(WORKER).path("stop_grace_period").asText());

        assertThat(stop).isGreaterThan(drain.plusSeconds(10));
    }

    @Test
    void theRealGatewayPathIsTheDefaultAndTheDemoAProfile() {
        List<String> withoutProfile = new ArrayList<>();
        List<String> demo = new ArrayList<>();
        compose.root().path("services").fields().forEachRemaining(service -> {
            JsonNode profiles = service.getValue().path("profiles");
            if (profiles.isMissingNode()) {
                withoutProfile.add(service.getKey());
            } else {
                profiles.forEach(p -> assertThat(p.asText()).isEqualTo("demo"));
                demo.add(service.getKey());
            }
        });

        assertThat(withoutProfile).containsExactly("kafka", "kafka-init", "minio", "minio-init", WORKER);
        assertThat(demo).containsExactly("gateway-simulator", "demo-producer");
        JsonNode onSimulator = compose.service(WORKER).path("depends_on").path("gateway-simulator");
        assertThat(onSimulator.path("required").asBoolean(true))
                .as("the worker must start without the demo profile")
                .isFalse();
    }

    @Test
    void theDemoWorkerUsesTheSimulatorsKeyModelAndPort() {
        List<String> command = new ArrayList<>();
        compose.service("gateway-simulator").path("command").forEach(a -> command.add(a.asText()));
        Map<String, String> demo = demoSettings();

        assertThat(demo)
                .containsOnlyKeys(
                        "IMAGE_WORKER_GATEWAY_BASE_URL", "IMAGE_WORKER_GATEWAY_API_KEY", "IMAGE_WORKER_GATEWAY_MODEL");
        assertThat(demo.get("IMAGE_WORKER_GATEWAY_API_KEY")).isEqualTo(option(command, "--api-key"));
        assertThat(demo.get("IMAGE_WORKER_GATEWAY_MODEL")).isEqualTo(option(command, "--model"));
        assertThat(demo.get("IMAGE_WORKER_GATEWAY_BASE_URL"))
                .isEqualTo("http://" + option(command, "--host") + ":" + option(command, "--port"));
        assertThat(entrypoint()).contains(demo.get("IMAGE_WORKER_GATEWAY_BASE_URL") + "/v1/models");
        assertThat(entrypoint())
                .endsWith("exec "
                        + Dockerfile.read(Path.of("Dockerfile"))
                                .stage("worker")
                                .last("ENTRYPOINT")
                                .replaceAll("[\\[\\]\" ]", ""));
    }

    /**
     * {@code kafka-init} creates every topic the worker reads or writes, those it uses only when a variable switches
     * them on included, by the name the worker would use (the same host variable, with a default where the worker has
     * none); the broker's auto-creation would give them its own partitions and configs. The cancel topic is
     * compacted and deleted after twice the readers' look-back at least, the parked topic kept long enough for a
     * parked request to be read back, the budget topic kept by time.
     */
    @Test
    void theInitCreatesEveryTopicTheWorkerUsesWithItsConfigs() {
        Map<String, String> init = compose.environment("kafka-init");
        Map<String, String[]> created = new java.util.LinkedHashMap<>();
        Matcher create = Pattern.compile("(?m)^create (\\S+) (\\d+)(.*)$")
                .matcher(compose.service("kafka-init").path("command").get(0).asText());
        while (create.find()) {
            String name = create.group(1).replace("\"", "");
            if (name.startsWith("$$")) {
                String variable = name.substring(2);
                assertThat(init).as(create.group(1)).containsKey(variable);
                name = ComposeFile.withDefaults(init.get(variable));
            }
            created.put(name, new String[] {create.group(2), create.group(3).strip()});
        }

        Map<String, String> worker = compose.environment(WORKER);
        Map<String, String> topics = new java.util.LinkedHashMap<>();
        worker.forEach((variable, value) -> {
            if (variable.startsWith("IMAGE_WORKER_TOPIC_")) {
                String name = ComposeFile.withDefaults(value);
                if (ComposeFile.fromHost(value)) {
                    // Named by the host: the init's name comes from the same variable, its default where the worker's
                    // is empty (the topic off).
                    String hostVariable = value.replaceAll("^\\$\\{([A-Za-z0-9_]+).*$", "$1");
                    String initName = init.values().stream()
                            .filter(v -> v.startsWith("${" + hostVariable + ":-"))
                            .findFirst()
                            .orElseThrow(() -> new AssertionError("kafka-init does not follow " + hostVariable));
                    name = ComposeFile.withDefaults(initName);
                }
                topics.put(variable, name);
            }
        });

        assertThat(topics)
                .containsKeys(
                        "IMAGE_WORKER_TOPIC_REQUEST",
                        "IMAGE_WORKER_TOPIC_REQUEST_PRIORITY",
                        "IMAGE_WORKER_TOPIC_REQUEST_PARKED",
                        "IMAGE_WORKER_TOPIC_COMPLETED",
                        "IMAGE_WORKER_TOPIC_FAILED",
                        "IMAGE_WORKER_TOPIC_DLQ",
                        "IMAGE_WORKER_TOPIC_STATUS",
                        "IMAGE_WORKER_TOPIC_CANCEL",
                        "IMAGE_WORKER_TOPIC_BUDGET");
        assertThat(created.keySet()).containsExactlyInAnyOrderElementsOf(topics.values());
        assertThat(created.get(topics.get("IMAGE_WORKER_TOPIC_REQUEST"))[0]).isEqualTo("3");
        assertThat(created.get(topics.get("IMAGE_WORKER_TOPIC_CANCEL"))[0]).isEqualTo("1");
        assertThat(created.get(topics.get("IMAGE_WORKER_TOPIC_BUDGET"))[0]).isEqualTo("1");

        Map<String, String> cancel = configs(created.get(topics.get("IMAGE_WORKER_TOPIC_CANCEL"))[1]);
        assertThat(cancel).containsEntry("cleanup.policy", "compact,delete");
        Duration lookBack = WorkerEnvironment.duration(worker.get("IMAGE_WORKER_CANCEL_RETENTION"));
        assertThat(Long.parseLong(cancel.get("retention.ms")))
                .isGreaterThanOrEqualTo(lookBack.multipliedBy(2).toMillis());
        Map<String, String> parked = configs(created.get(topics.get("IMAGE_WORKER_TOPIC_REQUEST_PARKED"))[1]);
        assertThat(parked).containsEntry("cleanup.policy", "delete");
        assertThat(Long.parseLong(parked.get("retention.ms")))
                .isGreaterThanOrEqualTo(Duration.ofDays(3).toMillis());
        assertThat(configs(created.get(topics.get("IMAGE_WORKER_TOPIC_BUDGET"))[1]))
                .containsEntry("cleanup.policy", "delete")
                .containsKey("retention.ms");
    }

    private static Map<String, String> configs(String pairs) {
        Map<String, String> configs = new java.util.LinkedHashMap<>();
        for (String pair : pairs.split("\\s+")) {
            if (!pair.isEmpty()) {
                configs.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
            }
        }
        return configs;
    }

    @Test
    void theDemoRequestsFileIsMountedIntoTheProducer() {
        assertThat(compose.service("demo-producer").path("volumes").get(0).asText())
                .startsWith("./deploy/demo/requests.jsonl:");
        assertThat(Path.of("deploy/demo/requests.jsonl")).isRegularFile();
    }

    private String entrypoint() {
        JsonNode entrypoint = compose.service(WORKER).path("entrypoint");
        return entrypoint.get(entrypoint.size() - 1).asText().strip();
    }

    /** What the worker's entrypoint exports when the demo's simulator answers. */
    private Map<String, String> demoSettings() {
        Map<String, String> settings = new java.util.LinkedHashMap<>();
        Matcher export = Pattern.compile("export (\\w+)=(\\S+)").matcher(entrypoint());
        while (export.find()) {
            settings.put(export.group(1), export.group(2));
        }
        return settings;
    }

    private static String option(List<String> command, String name) {
        int at = command.indexOf(name);
        assertThat(at).as(name).isNotNegative();
        return command.get(at + 1);
    }

    // ---- the images compose builds

    @Test
    void buildsFromSourceInStagesAndRunsAsANumericNonRootUser() {
        Dockerfile dockerfile = Dockerfile.read(Path.of("Dockerfile"));

        assertThat(dockerfile.stage("build").all("RUN"))
                .anyMatch(run -> run.contains("./mvnw") && run.contains("package"));
        assertThat(dockerfile.last().name()).isEqualTo("worker");
        assertThat(compose.service(WORKER).path("build").path("target").asText())
                .isEqualTo("worker");
        assertThat(compose.service("gateway-simulator")
                        .path("build")
                        .path("target")
                        .asText())
                .isEqualTo("gateway-simulator");
        for (String stage : List.of("worker", "gateway-simulator")) {
            assertThat(dockerfile.stage(stage).base()).matches("eclipse-temurin:25[.0-9_]*-jre" + DIGEST);
            assertThat(dockerfile.stage(stage).last("USER")).matches("[1-9][0-9]*");
            assertThat(dockerfile.stage(stage).all("COPY")).allMatch(copy -> copy.contains("--from=build"));
        }
    }

    /**
     * A JDK 25 AOT cache is only used by the JVM build that wrote it, on the same runtime image: the build stage
     * trains it with the worker's JVM taken from the very image the worker stage starts from, and the entrypoint
     * starts with it.
     */
    @Test
    void theAotCacheIsTrainedOnTheWorkersOwnJreAndStartedWith() throws IOException {
        Dockerfile dockerfile = Dockerfile.read(Path.of("Dockerfile"));
        Dockerfile.Stage build = dockerfile.stage("build");
        String runtime = dockerfile.stage("worker").base();

        assertThat(build.all("COPY")).contains("--from=" + runtime + " /opt/java/openjdk /opt/runtime-jre");
        assertThat(build.all("RUN"))
                .anyMatch(run -> run.contains("package")
                        && run.contains("-Paot")
                        && run.contains("-Daot.java=/opt/runtime-jre/bin/java"));
        assertThat(withoutDigest(build.base())).isEqualTo(withoutDigest(runtime).replaceFirst("-jre$", "-jdk"));
        assertThat(dockerfile.stage("worker").all("COPY"))
                .anyMatch(copy -> copy.endsWith("/build/target/quarkus-app/app/ /deployments/app/"));
        assertThat(dockerfile.stage("worker").all("COPY"))
                .anyMatch(copy -> copy.endsWith("src/main/docker/run-java.sh "
                        + dockerfile.stage("worker").last("ENTRYPOINT").replaceAll("[\\[\\]\" ]", "")));
        String entrypoint = Files.readString(Path.of("src/main/docker/run-java.sh"));
        assertThat(entrypoint).contains("/deployments/app/image-worker.aot").contains("-XX:AOTCache=");
        Matcher trainedWith = Pattern.compile("<aot.jvm-options>([^<]+)</aot.jvm-options>")
                .matcher(Files.readString(Path.of("pom.xml")));
        assertThat(trainedWith.find()).as("the aot profile's JVM options").isTrue();
        assertThat(List.of(entrypoint.substring(entrypoint.indexOf("exec java")).split("\\s+")))
                .as("the options the cache is trained with are the entrypoint's")
                .contains(trainedWith.group(1).trim().split("\\s+"));
    }

    /**
     * Every image the Dockerfiles start from or copy from is named by digest as well as tag: a tag is rebuilt in place
     * (the official images are, for security fixes), a digest is one image. The digests are those of the official
     * images' index (all platforms), as docker-library/repo-info records them; docs/operations.md says how to move.
     */
    @Test
    void everyBaseImageIsPinnedByDigest() {
        for (String file : List.of("Dockerfile", "src/main/docker/Dockerfile.jvm")) {
            Dockerfile dockerfile = Dockerfile.read(Path.of(file));
            List<String> stages =
                    dockerfile.stages().stream().map(Dockerfile.Stage::name).toList();
            for (Dockerfile.Stage stage : dockerfile.stages()) {
                if (!stages.contains(stage.base())) {
                    assertThat(stage.base())
                            .as("%s: the base of stage %s", file, stage.name())
                            .matches(".+" + DIGEST);
                }
                stage.all("COPY").stream()
                        .filter(copy -> copy.startsWith("--from="))
                        .map(copy -> copy.replaceFirst("^--from=(\\S+).*$", "$1"))
                        .filter(from -> from.contains(":") && !stages.contains(from))
                        .forEach(from -> assertThat(from)
                                .as("%s: an image stage %s copies from", file, stage.name())
                                .matches(".+" + DIGEST));
            }
        }
    }

    private static String withoutDigest(String image) {
        return image.replaceFirst("@sha256:.*$", "");
    }

    @Test
    void theImageBuiltFromAPackagedAppIsTheSameRuntime() {
        Dockerfile fromSource = Dockerfile.read(Path.of("Dockerfile"));
        Dockerfile packaged = Dockerfile.read(Path.of("src/main/docker/Dockerfile.jvm"));

        assertThat(packaged.last().base()).isEqualTo(fromSource.last().base());
        for (String keyword : List.of("USER", "ENTRYPOINT", "EXPOSE")) {
            assertThat(packaged.last().last(keyword))
                    .isEqualTo(fromSource.last().last(keyword));
        }
        assertThat(packaged.last().all("ENV")).isEqualTo(fromSource.last().all("ENV"));
    }

    @Test
    void theSimulatorNeedsNothingTheWorkerImageLacks() throws IOException {
        // The gateway-simulator image runs the simulator on the worker's own runtime dependencies.
        List<String> allowed = List.of(
                "java.",
                "javax.",
                "io.vertx.core.",
                "io.netty.",
                "com.fasterxml.jackson.",
                "com.drew.",
                "io.imageworker.testing.gateway.");
        try (Stream<Path> files = Files.list(Path.of("src/testing/java/io/imageworker/testing/gateway"))) {
            for (Path file : files.filter(f -> !f.getFileName().toString().endsWith("Test.java"))
                    .toList()) {
                Files.readAllLines(file).stream()
                        .filter(line -> line.startsWith("import "))
                        .map(line -> line.replaceFirst("import (static )?", ""))
                        .forEach(imported -> assertThat(allowed)
                                .as("%s imports %s", file.getFileName(), imported)
                                .anyMatch(imported::startsWith));
            }
        }
    }
}
