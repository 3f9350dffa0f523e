package io.imageworker.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.infra.S3Server;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Readiness follows the object store; liveness never calls out. The worker's store is one of this class's own, which
 * it stops: the other test classes of the JVM, the integration tests among them, run beside it on the shared one.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(ReadinessTest.WithOwnStore.class)
class ReadinessTest {

    /** The default worker, but for its store: an embedded one of its own. */
    public static class WithOwnStore extends WorkerTestResource {

        private static S3Server store;

        /** This class's store, started on the first call. */
        static synchronized S3Server store() {
            if (store == null) {
                S3Server started = S3Server.temporary();
                started.start();
                store = started;
            }
            return store;
        }

        @Override
        public Map<String, String> start() {
            Map<String, String> config = new HashMap<>(super.start());
            S3Server own = store();
            config.put("image-worker.storage.endpoint", own.endpoint().toString());
            config.put("image-worker.storage.access-key-id", own.accessKey());
            config.put("image-worker.storage.secret-access-key", own.secretKey());
            config.put("image-worker.storage.region", own.region());
            return config;
        }

        @Override
        public void stop() {
            synchronized (WithOwnStore.class) {
                if (store != null) {
                    store.close();
                    store = null;
                }
            }
        }
    }

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
        S3Server store = WithOwnStore.store();
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
