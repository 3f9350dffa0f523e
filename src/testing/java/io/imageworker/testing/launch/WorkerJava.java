package io.imageworker.testing.launch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The Java launcher a packaged worker is started with, and its feature version. By default the one running this JVM;
 * {@code -Dimage-worker-tests.worker-java=newest} (what the local run sets, pom.xml) takes the newest JDK of release
 * {@link #AOT_CACHE_RELEASE} or later installed beside it (a sibling of {@code java.home} with a {@code release} file
 * and a {@code bin/java}), where the worker starts from an AOT cache ({@link WorkerClassArchive}) as it does in its
 * image, and else the running one; a path names a launcher.
 *
 * <p>The suite keeps the tests' Java ({@code -Dtest.worker.java}, pom.xml): on Java 25 with the cache a worker was
 * ready after 4.4 CPU s against 5.35 on Java 17 with a class archive (one quiet start each, 29 November 2026), but over
 * a whole run its forty workers took 9.75 CPU s each against about 9.3: what a start saves, the rest of the run spent.
 */
public final class WorkerJava {

    /** {@code current}, {@code newest} or the path of a {@code java} launcher. */
    public static final String PROPERTY = "image-worker-tests.worker-java";

    /** The first release whose JVM starts from an AOT cache (JEP 483, 514, 515). */
    public static final int AOT_CACHE_RELEASE = 25;

    private static final Pattern JAVA_VERSION = Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)[^\"]*\"");

    private static volatile String chosen;

    private WorkerJava() {}

    /** The launcher the workers of this JVM start with (chosen once). */
    public static String command() {
        String command = chosen;
        if (command == null) {
            command = choose(System.getProperty(PROPERTY, "current").trim());
            chosen = command;
        }
        return command;
    }

    /** The launcher {@code setting} names ({@link #PROPERTY}). */
    static String choose(String setting) {
        return switch (setting) {
            case "", "current" -> current();
            case "newest" ->
                newestBeside(Path.of(System.getProperty("java.home")))
                        .map(home -> home.resolve("bin").resolve("java").toString())
                        .orElseGet(WorkerJava::current);
            default -> setting;
        };
    }

    /** The launcher of this JVM. */
    static String current() {
        return ProcessHandle.current().info().command().orElseGet(() -> Path.of(
                        System.getProperty("java.home"), "bin", "java")
                .toString());
    }

    /**
     * The home of the newest JDK of release {@link #AOT_CACHE_RELEASE} or later among the siblings of {@code javaHome},
     * if any is newer than the one at {@code javaHome}.
     */
    static Optional<Path> newestBeside(Path javaHome) {
        Path parent = javaHome.toAbsolutePath().getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            return Optional.empty();
        }
        int running = release(javaHome).orElse(Runtime.version().feature());
        try (Stream<Path> siblings = Files.list(parent)) {
            List<Path> homes = siblings.filter(
                            home -> Files.isExecutable(home.resolve("bin").resolve("java")))
                    .toList();
            return homes.stream()
                    .filter(home -> release(home).orElse(0) >= Math.max(AOT_CACHE_RELEASE, running + 1))
                    .max(Comparator.comparingInt((Path home) -> release(home).orElse(0))
                            .thenComparing(Path::toString));
        } catch (IOException | SecurityException e) {
            return Optional.empty();
        }
    }

    /** The feature release of the JDK at {@code home}, from its {@code release} file. */
    static Optional<Integer> release(Path home) {
        try {
            Matcher matcher = JAVA_VERSION.matcher(Files.readString(home.resolve("release"), StandardCharsets.UTF_8));
            return matcher.find() ? Optional.of(Integer.parseInt(matcher.group(1))) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The feature release of the launcher {@code java} (its JDK's {@code release} file; this JVM's if it is its own). */
    static int releaseOf(String java) {
        if (java.equals(current())) {
            return Runtime.version().feature();
        }
        Path home = Path.of(java).toAbsolutePath().getParent().getParent();
        return release(home).orElse(0);
    }

    /** The full version of the launcher {@code java}, for names of files made for it. */
    static String versionOf(String java) {
        if (java.equals(current())) {
            return Runtime.version().toString();
        }
        Path home = Path.of(java).toAbsolutePath().getParent().getParent();
        try {
            Matcher matcher = Pattern.compile("(?m)^JAVA_RUNTIME_VERSION=\"([^\"]+)\"")
                    .matcher(Files.readString(home.resolve("release"), StandardCharsets.UTF_8));
            if (matcher.find()) {
                return matcher.group(1);
            }
        } catch (IOException | RuntimeException e) {
            // Named by its path below.
        }
        return Integer.toHexString(java.hashCode());
    }
}
