package io.imageworker.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.infra.Infrastructure;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/** Readiness follows the object store; liveness never calls out. */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class ReadinessTest {

    @TestHTTPResource("/q/health/ready")
    URI ready;

    @TestHTTPResource("/q/health/live")
    URI live;

    private static int status(URI uri) throws Exception {
        return HttpClient.newHttpClient()
                .send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    @Test
    void isNotReadyWhileTheStoreIsDownButStaysAlive() throws Exception {
        var store = Infrastructure.get().s3();
        await().atMost(Duration.ofSeconds(30)).until(() -> status(ready) == 200);

        store.stop();
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> status(ready) == 503);
            assertThat(status(live)).isEqualTo(200);
        } finally {
            store.start();
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> status(ready) == 200);
    }
}
