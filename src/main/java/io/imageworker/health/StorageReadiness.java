package io.imageworker.health;

import io.imageworker.storage.ImageStore;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Ready only while the bucket can be reached: without it no image can be stored nor any result looked up. */
@Readiness
@ApplicationScoped
public class StorageReadiness implements AsyncHealthCheck {

    private final ImageStore store;

    StorageReadiness(ImageStore store) {
        this.store = store;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        return store.ping()
                .map(ok -> HealthCheckResponse.named("object-store")
                        .up()
                        .withData("bucket", store.bucket())
                        .build())
                .onFailure()
                .recoverWithItem(error -> HealthCheckResponse.named("object-store")
                        .down()
                        .withData("bucket", store.bucket())
                        .withData("error", String.valueOf(error.getMessage()))
                        .build());
    }
}
