package io.imageworker.testing.infra;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Where the build puts things: the packaged worker, the classpaths of the server JVMs, and the logs and data of the
 * processes the tests and tools start.
 */
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

    /**
     * {@code target/<name>/}, created if needed: {@code infra-logs} for the servers' output, {@code launch-logs} for
     * the workers'.
     */
    public static Path directory(String name) {
        return createDirectories(buildDir().resolve(name));
    }

    /**
     * The classpath of a server's JVM, as the build writes it to {@code target/infra/<name>.classpath}.
     *
     * @throws IllegalStateException when the build has not written it yet
     */
    static String serverClasspath(String name) {
        Path file = buildDir().resolve("infra").resolve(name + ".classpath");
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException("No classpath for the " + name + " JVM at " + file
                    + ": it is written by the build; run ./mvnw generate-test-resources (any ./mvnw test does it)");
        }
        try {
            return Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Creates {@code dir} and its parents as needed. */
    public static Path createDirectories(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A new empty directory in the system's temporary directory, named after {@code prefix}. */
    public static Path temporaryDirectory(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Deletes a directory tree, ignoring what is already gone; what cannot be deleted is reported on standard error,
     * never thrown (a cleanup that fails must not hide what the test or the run found).
     */
    public static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            System.err.println("could not delete " + dir + ": " + e);
        }
    }
}
