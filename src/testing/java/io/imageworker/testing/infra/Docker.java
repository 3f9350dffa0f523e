package io.imageworker.testing.infra;

import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.testcontainers.DockerClientFactory;

/**
 * Whether a Docker engine is reachable, asked in a way that is instant and silent where there is none: Testcontainers
 * is consulted only when a Docker endpoint is configured or a Docker socket answers (its own search logs errors and
 * takes seconds when nothing is there).
 */
final class Docker {

    private Docker() {}

    /** Whether Testcontainers can run containers here. */
    static boolean isAvailable() {
        if (!endpointLikely()) {
            return false;
        }
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    /** A configured endpoint (DOCKER_HOST, ~/.testcontainers.properties) or a local socket that accepts. */
    private static boolean endpointLikely() {
        String dockerHost = System.getenv("DOCKER_HOST");
        if (dockerHost != null && !dockerHost.isBlank()) {
            return true;
        }
        Path home = Path.of(System.getProperty("user.home"));
        if (configuresDockerHost(home.resolve(".testcontainers.properties"))) {
            return true;
        }
        List<Path> sockets = new ArrayList<>(List.of(
                Path.of("/var/run/docker.sock"),
                home.resolve(".docker/run/docker.sock"),
                home.resolve(".docker/desktop/docker.sock"),
                home.resolve(".colima/default/docker.sock"),
                home.resolve(".rd/docker.sock")));
        String runtimeDir = System.getenv("XDG_RUNTIME_DIR");
        if (runtimeDir != null && !runtimeDir.isBlank()) {
            sockets.add(Path.of(runtimeDir, "docker.sock"));
            sockets.add(Path.of(runtimeDir, "podman", "podman.sock"));
        }
        return sockets.stream().anyMatch(Docker::accepts);
    }

    private static boolean configuresDockerHost(Path testcontainersProperties) {
        if (!Files.isRegularFile(testcontainersProperties)) {
            return false;
        }
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(testcontainersProperties)) {
            properties.load(in);
        } catch (IOException e) {
            return false;
        }
        return properties.containsKey("docker.host");
    }

    private static boolean accepts(Path socket) {
        if (!Files.exists(socket)) {
            return false;
        }
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of(socket));
            return true;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }
}
