package io.imageworker.pipeline;

import static io.imageworker.pipeline.EditPipelineTest.edit;
import static io.imageworker.pipeline.EditPipelineTest.inline;
import static io.imageworker.pipeline.EditPipelineTest.uri;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.reference.ReferenceLoader;
import io.imageworker.testing.StoreProxy;
import io.imageworker.testing.StoreProxy.Exchange;
import io.imageworker.testing.StoreProxyTestResource;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.images.TestImages;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import jakarta.inject.Inject;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.services.s3.S3AsyncClient;

/**
 * References the worker must never read, end to end, each ending with no gateway call: {@code https://} hosts that
 * are on the host list but are loopback, private or cloud-metadata addresses ({@link OptInProfile}), an object over
 * 25 MB, and a store that cannot be read (which is a {@code STORAGE_ERROR}, not a refused reference). The store is
 * reached through a recording {@link StoreProxy}, so the S3 requests a reference caused can be seen.
 *
 * <p>A redirect to loopback is not tested here: it would need an allowed, non-loopback https server that redirects,
 * and every server a test can start is on loopback, which the worker refuses before any redirect. {@code
 * HttpsReferenceFetcherTest.refusesRedirectToLoopbackAddress} covers it with the fetcher's test-only address policy.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@TestProfile(OptInProfile.class)
@WithTestResource(StoreProxyTestResource.class)
class EditReferenceRefusalTest extends PipelineTestSupport {

    private static final String NO_COST = "{\"calls\":0,\"billed\":0,\"unknown\":0}";

    @Inject
    S3AsyncClient s3;

    @Inject
    Vertx vertx;

    private final StoreProxy store = StoreProxy.shared();
    private final AtomicInteger loopbackConnections = new AtomicInteger();
    private NetServer loopback;

    /** A listener on loopback, so that a refusal cannot be mistaken for a connection that failed. */
    @BeforeEach
    void listenOnLoopback() throws Exception {
        loopback = vertx.createNetServer()
                .connectHandler(socket -> {
                    loopbackConnections.incrementAndGet();
                    socket.close();
                })
                .listen(0, "127.0.0.1")
                .toCompletionStage()
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void stopListening() throws Exception {
        store.dropConnectionsFor(null);
        loopback.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @CsvSource({
        "https://127.0.0.1:PORT/base.png, 127.0.0.1, loopback",
        "https://localhost:PORT/base.png, localhost, loopback",
        "https://[::1]:PORT/base.png, ::1, loopback",
        "https://169.254.169.254/latest/meta-data/iam/security-credentials/, 169.254.169.254, link-local (cloud metadata)",
        "https://10.0.0.7/base.png, 10.0.0.7, private",
        "https://172.16.5.4/base.png, 172.16.5.4, private",
        "https://192.168.1.20/base.png, 192.168.1.20, private",
        "https://100.64.0.1/base.png, 100.64.0.1, carrier-grade NAT"
    })
    void refusesAListedHostOnAForbiddenAddressWithoutConnecting(String reference, String host, String kind) {
        String id = newId("ssrf");
        String url = reference.replace("PORT", String.valueOf(loopback.actualPort()));
        send(edit(id, "", inline(TestImages.png(1024, 1024), "image/png"), uri(url)));

        JsonNode event = refusedWithoutACall(id, "INVALID_REFERENCE");

        assertThat(event.path("error").path("message").asText())
                .startsWith("references[1]: host '" + host + "' has address ")
                .contains(", which is " + kind + ": references are never fetched from such an address")
                // The path may carry a signature: never repeated.
                .doesNotContain("/base.png", "meta-data");
        assertThat(loopbackConnections).hasValue(0);
    }

    @Test
    void refusesAMaskOnLoopbackNamingTheMask() {
        String id = newId("ssrfmask");
        send(edit(
                id,
                "\"mask\":" + uri("https://localhost:" + loopback.actualPort() + "/mask.png"),
                inline(TestImages.png(1024, 1024), "image/png")));

        JsonNode event = refusedWithoutACall(id, "INVALID_REFERENCE");

        assertThat(event.path("error").path("message").asText()).startsWith("mask: host 'localhost' has address ");
        assertThat(loopbackConnections).hasValue(0);
    }

    @Test
    void refusesAnObjectOver25MbFromItsSizeWithoutReadingIt() {
        String id = newId("huge");
        String key = "refs/" + id + "/huge.png";
        byte[] huge = new byte[26 * 1024 * 1024];
        new Random(7).nextBytes(huge);
        System.arraycopy(TestImages.png(16, 16), 0, huge, 0, 33); // a real PNG signature and IHDR first
        s3.putObject(put -> put.bucket(WorkerTestResource.BUCKET).key(key), AsyncRequestBody.fromBytes(huge))
                .join();
        int before = store.exchangesFor(key).size();

        send(edit(id, "", uri("s3://images/" + key)));
        JsonNode event = refusedWithoutACall(id, "INVALID_REFERENCE");

        assertThat(event.path("error").path("message").asText())
                .isEqualTo("references[0]: s3://images/" + key + " is " + huge.length + " bytes, over the 25 MB limit ("
                        + ReferenceLoader.MAX_BYTES + " bytes); not read");
        assertThat(store.exchangesFor(key)
                        .subList(before, store.exchangesFor(key).size()))
                .extracting(Exchange::method)
                .containsOnly("HEAD")
                .isNotEmpty();
    }

    @Test
    void readsAnAcceptedObjectWithAHeadThenAGetOfAtMost25Mb() {
        String id = newId("ranged");
        String key = "refs/" + id + "/base.png";
        s3.putObject(
                        put -> put.bucket(WorkerTestResource.BUCKET).key(key),
                        AsyncRequestBody.fromBytes(TestImages.png(1024, 1024)))
                .join();

        send(edit(id, "", uri("s3://images/" + key)));

        assertThat(result(id).topic()).isEqualTo("image-completed");
        assertThat(store.exchangesFor(key))
                .filteredOn(exchange -> !exchange.method().equals("PUT"))
                .extracting(Exchange::method, Exchange::range)
                .containsExactly(tuple("HEAD", null), tuple("GET", "bytes=0-" + ReferenceLoader.MAX_BYTES));
    }

    @Test
    void failsWithStorageErrorNotAsARefusedReferenceWhenTheStoreCannotBeRead() {
        String id = newId("storedown");
        String key = "refs/" + id + "/base.png";
        store.dropConnectionsFor(key);

        send(edit(id, "", inline(TestImages.png(1024, 1024), "image/png"), uri("s3://images/" + key)));
        JsonNode event = refusedWithoutACall(id, "STORAGE_ERROR");

        assertThat(event.path("error").path("message").asText())
                .startsWith("references[1]: the store could not be read for s3://images/" + key + ": ");
        assertThat(event.path("error").path("retryable").asBoolean()).isTrue();
        // Retried within the patience, not given up at the first dropped connection.
        assertThat(store.exchangesFor(key).size()).isGreaterThan(1);
    }

    private JsonNode refusedWithoutACall(String id, String code) {
        ConsumerRecord<byte[], byte[]> record = result(id);
        JsonNode event = body(record);
        assertThat(record.topic()).isEqualTo("image-failed");
        assertThat(event.path("error").path("code").asText()).isEqualTo(code);
        assertThat(event.path("billing").toString()).isEqualTo(NO_COST);
        assertThat(callsFor(id)).isEmpty();
        return event;
    }
}
