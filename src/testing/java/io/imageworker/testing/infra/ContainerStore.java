package io.imageworker.testing.infra;

import java.net.URI;
import java.time.Duration;
import java.util.function.Supplier;
import org.testcontainers.containers.MinIOContainer;
import org.testcontainers.utility.DockerImageName;

/** MinIO in a Testcontainers container, with the same credentials as the embedded {@link S3Server}. */
final class ContainerStore extends ContainerServer<MinIOContainer> implements ManagedStore {

    /** The MinIO image. */
    static final String IMAGE = "minio/minio:RELEASE.2023-09-04T19-57-37Z";

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    ContainerStore() {
        super(
                new MinIOContainer(DockerImageName.parse(IMAGE))
                        .withUserName(S3Server.ACCESS_KEY)
                        .withPassword(S3Server.SECRET_KEY),
                9000);
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

    @Override
    String address() {
        return endpoint().toString();
    }

    @Override
    void awaitReady(Supplier<String> diagnostics) {
        S3Server.awaitAnswering(endpoint(), START_TIMEOUT, () -> true, diagnostics);
    }
}
