package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.deploy.Dockerfile;
import io.imageworker.testing.images.TestImages;
import io.imageworker.testing.infra.BuildPaths;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The container image the {@code image} profile builds with Quarkus's Jib extension, read back from its tarball
 * ({@code docker load} format): the packaged application, file for file, in the layout and with the configuration of
 * the Dockerfile's image (the base image's run-java.sh, the same environment, uid 185, port 8080), the OCI labels, and
 * a digest to pin it by. Runs only in that profile ({@code ./mvnw verify -Pimage}), which gives the tarball's path.
 */
class ContainerImageIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode manifest;
    private static JsonNode config;
    /** Every file of every layer, by its path in the image, with its sha256. */
    private static final Map<String, String> files = new TreeMap<>();

    @BeforeAll
    static void readTheTarball() throws IOException {
        Path tarball = Path.of(System.getProperty("image.tarball", "no image.tarball given: run -Pimage"));
        assertThat(tarball).as("the image tarball").isRegularFile();
        Map<String, byte[]> entries = new HashMap<>();
        try (TarArchiveInputStream tar = new TarArchiveInputStream(Files.newInputStream(tarball))) {
            for (TarArchiveEntry entry; (entry = tar.getNextEntry()) != null; ) {
                entries.put(entry.getName(), tar.readAllBytes());
            }
        }
        manifest = JSON.readTree(entries.get("manifest.json")).get(0);
        config = JSON.readTree(entries.get(manifest.path("Config").asText()));
        for (JsonNode layer : manifest.path("Layers")) {
            try (TarArchiveInputStream tar = new TarArchiveInputStream(
                    new GZIPInputStream(new java.io.ByteArrayInputStream(entries.get(layer.asText()))))) {
                for (TarArchiveEntry entry; (entry = tar.getNextEntry()) != null; ) {
                    if (entry.isFile()) {
                        files.put("/" + entry.getName(), TestImages.sha256(tar));
                    }
                }
            }
        }
    }

    @Test
    void holdsThePackagedApplicationFileForFile() throws IOException {
        Path app = BuildPaths.workerJar().getParent();
        Map<String, String> packaged = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(app)) {
            // quarkus-app-dependencies.txt lists the build's dependencies: the Dockerfile's image leaves it out too.
            for (Path file : walk.filter(Files::isRegularFile)
                    .filter(file -> !file.getFileName().toString().endsWith(".txt"))
                    .toList()) {
                try (InputStream in = Files.newInputStream(file)) {
                    packaged.put(
                            "/deployments/" + app.relativize(file).toString().replace('\\', '/'),
                            TestImages.sha256(in));
                }
            }
        }

        assertThat(files).containsAllEntriesOf(packaged);
        assertThat(files.keySet()).allMatch(path -> path.startsWith("/deployments/"), "only the application");
        assertThat(manifest.path("Layers").size())
                .as("layers from least to most often changed: libraries, runner, application, generated code")
                .isGreaterThanOrEqualTo(4);
    }

    @Test
    void runsAsTheDockerfilesImageDoes() {
        Dockerfile.Stage worker = Dockerfile.read(Path.of("Dockerfile")).stage("worker");
        JsonNode container = config.path("config");
        List<String> environment = JSON.convertValue(container.path("Env"), List.class);

        assertThat(container.path("Entrypoint").get(0).asText())
                .isEqualTo(
                        worker.last("ENTRYPOINT").replaceAll("[\\[\\]\"]", "").strip());
        assertThat(container.path("User").asText()).isEqualTo(worker.last("USER"));
        assertThat(container.path("ExposedPorts").has(worker.last("EXPOSE") + "/tcp"))
                .isTrue();
        assertThat(environment)
                .contains(
                        worker.last("ENV").replace("\"", ""),
                        "JAVA_OPTS_APPEND="
                                + worker.all("ENV").stream()
                                        .filter(env -> env.startsWith("JAVA_OPTS_APPEND="))
                                        .findFirst()
                                        .orElseThrow()
                                        .substring("JAVA_OPTS_APPEND=".length())
                                        .replace("\"", ""));
        assertThat(config.path("os").asText()).isEqualTo("linux");
    }

    @Test
    void carriesTheOpenContainerLabelsAndTheNameItWasGiven() {
        JsonNode labels = config.path("config").path("Labels");

        assertThat(labels.path("org.opencontainers.image.title").asText()).isEqualTo("image-worker");
        assertThat(labels.path("org.opencontainers.image.version").asText())
                .isEqualTo(System.getProperty("project.version"));
        assertThat(labels.path("org.opencontainers.image.base.name").asText())
                .isEqualTo(System.getProperty("image.base"));
        assertThat(labels.path("org.opencontainers.image.revision").asText()).isNotBlank();
        assertThat(labels.path("org.opencontainers.image.description").asText()).isNotBlank();
        assertThat(manifest.path("RepoTags").get(0).asText()).isEqualTo(System.getProperty("image.name"));
    }

    @Test
    void writesTheDigestToPinTheImageBy() throws IOException {
        String digest = Files.readString(
                        Path.of(System.getProperty("image.tarball")).resolveSibling("jib-image.digest"))
                .strip();

        assertThat(digest).matches("sha256:[0-9a-f]{64}");
    }
}
