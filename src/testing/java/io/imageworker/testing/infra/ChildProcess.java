package io.imageworker.testing.infra;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A process started by the tests or the tools (a server's JVM, the packaged worker), its output in a log file of its
 * own: what every such process shares, a stop that ends in a kill, and the log quoted in failure messages.
 */
public abstract class ChildProcess {

    /** Loopback only: the children serve this machine's tests and local runs. */
    public static final String HOST = "127.0.0.1";

    private final String name;
    private final Path logFile;
    private final Duration stopTimeout;
    private Process process;

    /**
     * @param name the name in the log's lines and in failure messages
     * @param logFile where the output goes (appended, the header line of each start too)
     * @param stopTimeout how long a stop waits after SIGTERM before it kills, and a kill for the exit
     */
    protected ChildProcess(String name, Path logFile, Duration stopTimeout) {
        this.name = name;
        this.logFile = logFile;
        this.stopTimeout = stopTimeout;
    }

    /** Starts {@code builder}'s command after a header line in the log; the caller keeps or runs the process. */
    protected final Process launch(ProcessBuilder builder, String header) {
        appendToLog("==== " + Instant.now() + " " + name + " " + header);
        try {
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start " + name + ": " + String.join(" ", builder.command()), e);
        }
    }

    /** The running process, or null. */
    protected final synchronized Process process() {
        return process;
    }

    /** Makes {@code started} the running process. */
    protected final synchronized void running(Process started) {
        this.process = started;
    }

    /** Whether the process runs. */
    public synchronized boolean isAlive() {
        return process != null && process.isAlive();
    }

    /**
     * Graceful stop: SIGTERM, then waits for the exit; killed if it takes longer than the stop timeout. Does nothing
     * when it does not run.
     */
    public synchronized void stop() {
        if (process == null) {
            return;
        }
        process.destroy();
        boolean exited = waitForExit(process, stopTimeout);
        if (!exited) {
            appendToLog("==== " + Instant.now() + " no exit " + stopTimeout.toSeconds() + " s after SIGTERM: killing");
            process.destroyForcibly();
            waitForExit(process, stopTimeout);
        }
        ended(process, !exited);
        process = null;
    }

    /** Hard stop: SIGKILL, as if the machine lost power under the process. Returns once the process is gone. */
    public synchronized void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        waitForExit(process, stopTimeout);
        ended(process, true);
        process = null;
    }

    /** Called once the process has ended by {@link #stop()} or {@link #kill()}, {@code killed} if by SIGKILL. */
    protected void ended(Process ended, boolean killed) {}

    /** The log file: every start appends to it. */
    public Path logFile() {
        return logFile;
    }

    /** A sentence pointing at the log and quoting its last lines, for failure messages. */
    public String describeLog() {
        List<String> lines;
        try {
            lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
        } catch (IOException | UncheckedIOException e) {
            return " (log " + logFile + " unreadable: " + e + ")";
        }
        List<String> tail = lines.subList(Math.max(0, lines.size() - 40), lines.size());
        return "; see " + logFile + ", which ends with:\n" + String.join("\n", tail);
    }

    /** Appends a line of this side's own to the log. */
    protected final synchronized void appendToLog(String line) {
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

    /** Waits up to {@code timeout} for {@code process} to exit; whether it did. */
    protected static boolean waitForExit(Process process, Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * A TCP port free on the loopback address right now, chosen below the kernel's range of ephemeral ports (read from
     * {@value #EPHEMERAL_RANGE} where there is one; 32768 otherwise) and never handed out twice by this JVM. A port of
     * the ephemeral range, which {@code new ServerSocket(0)} hands out, may be taken by any outgoing connection (a Kafka
     * client's, an HTTP client's) between this check and the server's bind, or while a server restarts on it: a
     * loaded run of the suite, two test JVMs side by side, saw a worker fail to start on "Port ... in use".
     */
    public static int freePort() {
        int high = ephemeralLow() - 1;
        int low = Math.max(1024, high - 16_383);
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(low, high + 1);
            if (HANDED_OUT.add(port)) {
                try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getByName(HOST))) {
                    return port;
                } catch (IOException inUse) {
                    // Taken by someone else: try another.
                }
            }
        }
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Where Linux says its range of ephemeral ports is. */
    static final String EPHEMERAL_RANGE = "/proc/sys/net/ipv4/ip_local_port_range";

    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    /** The first ephemeral port: where outgoing connections take their local ports from. */
    private static int ephemeralLow() {
        try {
            String[] range = Files.readString(Path.of(EPHEMERAL_RANGE)).trim().split("\\s+");
            int low = Integer.parseInt(range[0]);
            return low > 2048 ? low : 32_768;
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }
}
