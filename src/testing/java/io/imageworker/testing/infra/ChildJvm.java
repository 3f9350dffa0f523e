package io.imageworker.testing.infra;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One server running in its own JVM, started from this (test) JVM. The server's libraries would clash with Quarkus
 * in the test JVM, so each runs with a classpath of its own, written by the build to {@code target/infra/} (see the
 * {@code maven-dependency-plugin} executions in {@code pom.xml}). Its output goes to a log file under
 * {@code target/infra-logs/}, never to the console.
 */
final class ChildJvm extends ChildProcess {

    private static final Duration GRACEFUL_STOP = Duration.ofSeconds(30);

    private final String classpath;
    private final List<String> jvmOptions;
    private final String mainClass;
    private final List<String> args;
    /** {@link ParentWatch}'s arguments for a tool to run before the next start; empty for none. */
    private List<String> firstTool = List.of();

    /**
     * @param name which server, also the name of its classpath file ({@code target/infra/<name>.classpath})
     * @param jvmOptions options before the main class (heap, system properties)
     * @param mainClass the server's main class
     * @param args the main class's arguments
     * @param logFile where the child's stdout and stderr go (appended)
     */
    ChildJvm(String name, List<String> jvmOptions, String mainClass, List<String> args, Path logFile) {
        super(name, logFile, GRACEFUL_STOP);
        this.classpath = parentWatchClasspath() + File.pathSeparator + BuildPaths.serverClasspath(name);
        this.jvmOptions = List.copyOf(jvmOptions);
        this.mainClass = mainClass;
        this.args = List.copyOf(args);
    }

    /** Starts the child; it keeps running until {@link #stop()} or {@link #kill()}. */
    synchronized void start() {
        if (!isAlive()) {
            List<String> first = firstTool;
            firstTool = List.of();
            running(launch(first, mainClass, args));
        }
    }

    /**
     * At the next {@link #start()} only, runs a server's one-off tool first in the server's own JVM (Kafka's storage
     * formatter): its static {@code int execute(String[], PrintStream)}, its output into the same log; the server
     * starts if it returns 0, else the JVM exits with an error, which the server's readiness wait reports.
     */
    synchronized void runFirst(String toolClass, List<String> toolArgs) {
        List<String> first = new ArrayList<>(List.of(ParentWatch.FIRST, toolClass, Integer.toString(toolArgs.size())));
        first.addAll(toolArgs);
        firstTool = List.copyOf(first);
    }

    private Process launch(List<String> first, String main, List<String> mainArgs) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        // Through ParentWatch, which ends the server when this JVM is gone (it keeps the child's stdin pipe open).
        command.add(ParentWatch.class.getName());
        command.addAll(first);
        command.add(main);
        command.addAll(mainArgs);
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()));
        // Through the environment rather than -cp: keeps `ps` readable and stays clear of command-line limits.
        builder.environment().put("CLASSPATH", classpath);
        return launch(builder, "starting " + main + " " + String.join(" ", mainArgs));
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
        Path root = BuildPaths.buildDir().resolve("infra").resolve("parent-watch");
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
}
