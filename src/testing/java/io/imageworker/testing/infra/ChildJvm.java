package io.imageworker.testing.infra;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One server running in its own JVM, started from this (test) JVM. The server's libraries would clash with Quarkus
 * in the test JVM, so each runs with a classpath of its own, written by the build to {@code target/infra/} (see the
 * {@code maven-dependency-plugin} executions in {@code pom.xml}). Its output goes to a log file under
 * {@code target/infra-logs/}, never to the console.
 */
final class ChildJvm {

    /** Loopback only: the servers are for this machine's tests and local runs. */
    static final String HOST = "127.0.0.1";

    private static final Duration GRACEFUL_STOP = Duration.ofSeconds(30);

    private final String name;
    private final String classpath;
    private final List<String> jvmOptions;
    private final String mainClass;
    private final List<String> args;
    private final Path logFile;
    private Process process;

    /**
     * @param name which server, also the name of its classpath file ({@code target/infra/<name>.classpath})
     * @param jvmOptions options before the main class (heap, system properties)
     * @param mainClass the server's main class
     * @param args the main class's arguments
     * @param logFile where the child's stdout and stderr go (appended)
     */
    ChildJvm(String name, List<String> jvmOptions, String mainClass, List<String> args, Path logFile) {
        this.name = name;
        this.classpath = parentWatchClasspath() + File.pathSeparator + classpath(name);
        this.jvmOptions = List.copyOf(jvmOptions);
        this.mainClass = mainClass;
        this.args = List.copyOf(args);
        this.logFile = logFile;
    }

    /** Starts the child; it keeps running until {@link #stop()} or {@link #kill()}. */
    synchronized void start() {
        if (isAlive()) {
            return;
        }
        process = launch(mainClass, args);
    }

    /**
     * Runs another main class with the same classpath and options to completion (a server's one-off tool, such as
     * Kafka's storage formatter), its output into the same log.
     *
     * @throws IllegalStateException when it does not exit with 0 within {@code timeout}
     */
    void runToCompletion(String toolMainClass, List<String> toolArgs, Duration timeout) {
        Process tool = launch(toolMainClass, toolArgs);
        try {
            if (!tool.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                tool.destroyForcibly();
                throw new IllegalStateException(toolMainClass + " did not finish within " + timeout + describeLog());
            }
        } catch (InterruptedException e) {
            tool.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running " + toolMainClass, e);
        }
        if (tool.exitValue() != 0) {
            throw new IllegalStateException(toolMainClass + " exited with " + tool.exitValue() + describeLog());
        }
    }

    private Process launch(String main, List<String> mainArgs) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        // Through ParentWatch, which ends the server when this JVM is gone (it keeps the child's stdin pipe open).
        command.add(ParentWatch.class.getName());
        command.add(main);
        command.addAll(mainArgs);
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        // Through the environment rather than -cp: keeps `ps` readable and stays clear of command-line limits.
        builder.environment().put("CLASSPATH", classpath);
        appendToLog("==== " + Instant.now() + " starting " + main + " " + String.join(" ", mainArgs));
        try {
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start the " + name + " JVM", e);
        }
    }

    /** Whether the child process is running. */
    synchronized boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Graceful stop: SIGTERM, then waits for the exit (a hard kill if it takes longer than 30 s). */
    synchronized void stop() {
        if (process == null) {
            return;
        }
        process.destroy();
        if (!waitForExit(GRACEFUL_STOP)) {
            appendToLog(
                    "==== " + Instant.now() + " no exit " + GRACEFUL_STOP.toSeconds() + " s after SIGTERM: killing");
            process.destroyForcibly();
            waitForExit(GRACEFUL_STOP);
        }
        process = null;
    }

    /** Hard stop: SIGKILL, as if the machine lost power under the process (the OS keeps written pages). */
    synchronized void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        waitForExit(GRACEFUL_STOP);
        process = null;
    }

    private boolean waitForExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The child's log file. */
    Path logFile() {
        return logFile;
    }

    /** A sentence pointing at the log and quoting its last lines, for failure messages. */
    String describeLog() {
        List<String> lines;
        try {
            lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
        } catch (IOException | UncheckedIOException e) {
            return " (log " + logFile + " unreadable: " + e + ")";
        }
        List<String> tail = lines.subList(Math.max(0, lines.size() - 40), lines.size());
        return "; see " + logFile + ", which ends with:\n" + String.join("\n", tail);
    }

    private void appendToLog(String line) {
        try {
            Files.writeString(
                    logFile,
                    line + System.lineSeparator(),
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Common JVM options of a server child: small heap, quick start, logback configured by {@code logbackXml}. */
    static List<String> serverJvmOptions(String maxHeap, Path logbackXml) {
        return List.of(
                "-Xmx" + maxHeap,
                // Small, short-lived servers on a 2-core machine: a serial GC and C1 only start fastest.
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                // A server out of memory dies (its log says why) instead of hanging the tests.
                "-XX:+ExitOnOutOfMemoryError",
                "-Djava.awt.headless=true",
                "-Djava.net.preferIPv4Stack=true",
                "-Dlogback.configurationFile=" + logbackXml);
    }

    /** Writes a logback configuration that sends INFO and above to stdout (the log file). */
    static Path writeLogbackConfig(Path dir) {
        String xml =
                """
                <configuration>
                  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
                    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n</pattern></encoder>
                  </appender>
                  <root level="INFO"><appender-ref ref="OUT"/></root>
                </configuration>
                """;
        try {
            return Files.writeString(dir.resolve("logback.xml"), xml, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A directory holding only {@link ParentWatch}'s class file (copied there from this JVM's classpath), so that the
     * server JVM gets it without the rest of the test classes.
     */
    private static synchronized String parentWatchClasspath() {
        Path root = buildDir().resolve("infra").resolve("parent-watch");
        String resource = ParentWatch.class.getName().replace('.', '/') + ".class";
        Path target = root.resolve(resource);
        try (InputStream in = ParentWatch.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("No class file " + resource + " on the classpath");
            }
            Files.createDirectories(target.getParent());
            Path partial = Files.createTempFile(target.getParent(), "ParentWatch", ".partial");
            Files.copy(in, partial, StandardCopyOption.REPLACE_EXISTING);
            // Atomic: another JVM (a second test fork, a local run) may be reading the same file.
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return root.toString();
    }

    /**
     * The classpath of a server's JVM, as written by the build.
     *
     * @throws IllegalStateException when the build has not written it yet
     */
    static String classpath(String name) {
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

    /**
     * The Maven build directory ({@code target}): the system property {@code image-worker.build-dir} when set, else
     * the parent of the directory these classes were loaded from ({@code target/test-classes}), else
     * {@code ./target}.
     */
    static Path buildDir() {
        String configured = System.getProperty("image-worker.build-dir");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured).toAbsolutePath();
        }
        try {
            Path classes = Path.of(ChildJvm.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            if (Files.isDirectory(classes) && classes.getParent() != null) {
                return classes.getParent();
            }
        } catch (URISyntaxException | RuntimeException e) {
            // Unusual class loader: fall back to the working directory, the project root under Maven.
        }
        return Path.of("target").toAbsolutePath();
    }

    /** {@code target/infra-logs/}, created if needed. */
    static Path logDir() {
        Path dir = buildDir().resolve("infra-logs");
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A TCP port free on the loopback address right now. */
    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes a directory tree, ignoring what is already gone. */
    static void deleteTree(Path dir) {
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
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
