package io.imageworker.testing.infra;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * A real server in a JVM of its own ({@link ChildJvm}), on a loopback port that stays the same across
 * {@link #stop()}/{@link #start()}, with its data in one directory: what {@link KafkaBroker} and {@link S3Server} share.
 * A subclass says how its server is configured ({@link #arguments(Path)}) and when it answers
 * ({@link #awaitReady(BooleanSupplier, Supplier)}). {@link #close()} ends it and deletes the data of a temporary one.
 */
abstract class EmbeddedServer implements ManagedServer, AutoCloseable {

    private static final Logger LOG = Logger.getLogger(EmbeddedServer.class);

    private final String name;
    private final String title;
    private final String mainClass;
    private final String maxHeap;
    /** The server's data. */
    final Path dataDir;

    private final boolean temporary;
    private final int port;
    private final Path configDir;
    private final Path logFile;
    private ChildJvm jvm;
    private boolean logAnnounced;

    /**
     * @param name which server: its classpath file ({@code target/infra/<name>.classpath}) and its log file
     *     ({@code target/infra-logs/<name>-<port>.log})
     * @param title what the log lines call it
     * @param dataDir where its data lives
     * @param temporary whether {@link #close()} deletes the data
     * @param port its client port, or 0 for a free one
     */
    EmbeddedServer(
            String name, String title, String mainClass, String maxHeap, Path dataDir, boolean temporary, int port) {
        this.name = name;
        this.title = title;
        this.mainClass = mainClass;
        this.maxHeap = maxHeap;
        this.dataDir = BuildPaths.createDirectories(dataDir);
        this.temporary = temporary;
        this.port = port == 0 ? ChildProcess.freePort() : port;
        this.configDir = BuildPaths.temporaryDirectory("image-worker-" + name + "-config");
        this.logFile = BuildPaths.directory("infra-logs").resolve(name + "-" + this.port + ".log");
        try {
            Files.deleteIfExists(logFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The main class's arguments, once the server's configuration is written into {@code configDir}. */
    abstract List<String> arguments(Path configDir);

    /**
     * Returns once the server answers.
     *
     * @param alive false as soon as the server cannot come up any more (its process exited): fails at once
     * @param diagnostics what to add to a failure message (the end of its log)
     * @throws IllegalStateException when it does not come up
     */
    abstract void awaitReady(BooleanSupplier alive, Supplier<String> diagnostics);

    /** Its address, for the log lines. */
    abstract String address();

    /** Runs before each start, with the server down. */
    void beforeStart(ChildJvm server) {}

    @Override
    public ServerMode mode() {
        return ServerMode.EMBEDDED;
    }

    /**
     * Starts the server and returns once it answers. Does nothing when it runs.
     *
     * @throws IllegalStateException when it does not come up; the message quotes the end of its log
     */
    @Override
    public synchronized void start() {
        ChildJvm server = jvm();
        if (server.isAlive()) {
            return;
        }
        long started = System.nanoTime();
        if (!logAnnounced) {
            LOG.infof("%s log: %s", title, logFile);
            logAnnounced = true;
        }
        beforeStart(server);
        server.start();
        awaitReady(server::isAlive, server::describeLog);
        LOG.infof("%s ready at %s after %d ms", title, address(), (System.nanoTime() - started) / 1_000_000);
    }

    /** Stops the server gracefully (SIGTERM) and waits for it to exit; data and port stay for {@link #start()}. */
    @Override
    public synchronized void stop() {
        jvm().stop();
    }

    /** Kills the server (SIGKILL); {@link #start()} recovers its data as after a crash. */
    @Override
    public synchronized void kill() {
        jvm().kill();
    }

    /** The client port. */
    public int port() {
        return port;
    }

    /**
     * Ends the server: a temporary one is killed and its data deleted, a persistent one is stopped gracefully and its
     * data kept.
     */
    @Override
    public synchronized void close() {
        if (jvm != null && temporary) {
            jvm.kill();
        } else if (jvm != null) {
            jvm.stop();
        }
        if (temporary) {
            BuildPaths.deleteTree(dataDir);
        }
        BuildPaths.deleteTree(configDir);
    }

    /** The server's JVM, created on first use, after the subclass's constructor has run. */
    private synchronized ChildJvm jvm() {
        if (jvm == null) {
            jvm = new ChildJvm(
                    name,
                    ChildJvm.serverJvmOptions(maxHeap, ChildJvm.writeLogbackConfig(configDir)),
                    mainClass,
                    arguments(configDir),
                    logFile);
        }
        return jvm;
    }

    /** Writes a server's configuration file into {@code configDir}. */
    static Path writeProperties(Path configDir, String fileName, String text) {
        try {
            return Files.writeString(configDir.resolve(fileName), text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
