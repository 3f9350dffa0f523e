package io.imageworker.testing.infra;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.testcontainers.containers.MinIOContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * MinIO in a Testcontainers container, with the same credentials as the embedded {@link S3Server}. The host port is
 * fixed when the container is created, so that a Docker stop/start keeps the endpoint; objects stay in the
 * container between the two.
 */
final class ContainerStore implements ManagedStore, AutoCloseable {

    /** The MinIO image. */
    static final String IMAGE = "minio/minio:RELEASE.2023-09-04T19-57-37Z";

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final MinIOContainer container;

    ContainerStore() {
        this.container = new MinIOContainer(DockerImageName.parse(IMAGE))
                .withUserName(S3Server.ACCESS_KEY)
                .withPassword(S3Server.SECRET_KEY);
        container.setPortBindings(List.of(ChildJvm.freePort() + ":9000"));
        container.start();
    }

    @Override
    public ServerMode mode() {
        return ServerMode.CONTAINER;
    }

    @Override
    public URI endpoint() {
        return URI.create(container.getS3URL());
    }

    @Override
    public String accessKey() {
        return S3Server.ACCESS_KEY;
    }

    @Override
    public String secretKey() {
        return S3Server.SECRET_KEY;
    }

    @Override
    public String region() {
        return S3Server.REGION;
    }

    /** {@code docker stop}; the container and its objects stay. */
    @Override
    public synchronized void stop() {
        if (!isRunning()) {
            return;
        }
        container
                .getDockerClient()
                .stopContainerCmd(container.getContainerId())
                .withTimeout(10)
                .exec();
    }

    /** {@code docker start} of the same container, then waits until it answers HTTP. */
    @Override
    public synchronized void start() {
        if (isRunning()) {
            return;
        }
        container
                .getDockerClient()
                .startContainerCmd(container.getContainerId())
                .exec();
        S3Server.awaitAnswering(
                endpoint(), START_TIMEOUT, () -> true, () -> "; container log:\n" + container.getLogs());
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
