package io.imageworker.testing.infra;

import java.util.List;
import java.util.function.Supplier;
import org.testcontainers.containers.GenericContainer;

/**
 * A server in a Testcontainers container, where a Docker engine is reachable: what {@link ContainerKafka} and
 * {@link ContainerStore} share. The host port is fixed when the container is created (free here when chosen), so
 * that a Docker stop/start keeps the address the server advertises; the data stays in the container between the two.
 */
abstract class ContainerServer<C extends GenericContainer<?>> implements ManagedServer, AutoCloseable {

    /** The container, started. */
    final C container;

    private final String image;

    /** Starts {@code container} with {@code port} bound to a free host port. */
    ContainerServer(C container, int port) {
        this.container = container;
        this.image = container.getDockerImageName();
        container.setPortBindings(List.of(ChildProcess.freePort() + ":" + port));
        container.start();
    }

    /** Returns once the server in the (re)started container answers; {@code diagnostics} quotes its log. */
    abstract void awaitReady(Supplier<String> diagnostics);

    /** Its address, for the log line. */
    abstract String address();

    @Override
    public ServerMode mode() {
        return ServerMode.CONTAINER;
    }

    @Override
    public String description() {
        return "Testcontainers " + image + " at " + address();
    }

    /** {@code docker stop}: SIGTERM, SIGKILL after 10 s. The container and its data stay. */
    @Override
    public synchronized void stop() {
        if (isRunning()) {
            container
                    .getDockerClient()
                    .stopContainerCmd(container.getContainerId())
                    .withTimeout(10)
                    .exec();
        }
    }

    /** {@code docker start} of the same container, then waits until the server answers. */
    @Override
    public synchronized void start() {
        if (!isRunning()) {
            container
                    .getDockerClient()
                    .startContainerCmd(container.getContainerId())
                    .exec();
            awaitReady(() -> "; container log:\n" + container.getLogs());
        }
    }

    /** {@code docker kill}. */
    @Override
    public synchronized void kill() {
        if (isRunning()) {
            container
                    .getDockerClient()
                    .killContainerCmd(container.getContainerId())
                    .exec();
        }
    }

    private boolean isRunning() {
        Boolean running = container
                .getDockerClient()
                .inspectContainerCmd(container.getContainerId())
                .exec()
                .getState()
                .getRunning();
        return Boolean.TRUE.equals(running);
    }

    /** Removes the container. */
    @Override
    public void close() {
        container.stop();
    }
}
