package io.imageworker.testing.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where the build puts things: the packaged worker, and the logs and data of launched processes. */
public final class BuildPaths {

    private BuildPaths() {}

    /**
     * The Maven build directory ({@code target}): the system property {@code image-worker.build-dir} when set, else
     * the parent of the directory these classes were loaded from ({@code target/test-classes}), else
     * {@code ./target}.
     */
    public static Path buildDir() {
        String configured = System.getProperty("image-worker.build-dir");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured).toAbsolutePath();
        }
        try {
            Path classes = Path.of(BuildPaths.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            if (Files.isDirectory(classes) && classes.getParent() != null) {
                return classes.getParent();
            }
        } catch (URISyntaxException | RuntimeException e) {
            // An unusual class loader: fall back to the working directory, the project root under Maven.
        }
        return Path.of("target").toAbsolutePath();
    }

    /**
     * The packaged worker, {@code target/quarkus-app/quarkus-run.jar}.
     *
     * @throws IllegalStateException when it has not been built
     */
    public static Path workerJar() {
        Path jar = buildDir().resolve("quarkus-app").resolve("quarkus-run.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(
                    "No packaged worker at " + jar + ": build it first with ./mvnw package -DskipTests");
        }
        return jar;
    }

    /** {@code target/launch-logs/}, created if needed: the output of every worker process started from here. */
    static Path logDir() {
        return createDirectories(buildDir().resolve("launch-logs"));
    }

    static Path createDirectories(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
