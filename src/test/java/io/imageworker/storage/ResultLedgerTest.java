package io.imageworker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.imageworker.contract.Billing;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.RequestFailure;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.contract.TestCodec;
import io.imageworker.contract.VariantOutcome;
import io.imageworker.support.Patience;
import io.imageworker.support.TestMetrics;
import io.imageworker.support.Tracing;
import io.imageworker.testing.TestConfig;
import io.imageworker.testing.infra.Infrastructure;
import io.imageworker.testing.infra.ManagedStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;

/**
 * The result ledger at its own seam, on a real S3 server (S3Proxy): what it records is what a redelivery reads back,
 * and what it cannot read stops the request before any call instead of passing for "no record".
 */
class ResultLedgerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final String bucket = "ledger-" + UUID.randomUUID();
    private final ManagedStore store = Infrastructure.get().s3();
    private final S3AsyncClient s3 = store.newAsyncClient();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @AfterEach
    void close() {
        s3.close();
    }

    @Test
    void aRequestWithNoRecordIsNotFound() {
        ResultLedger ledger = ledger(bucket);

        assertThat(ledger.find("r-none").await().atMost(WAIT)).isEmpty();
        assertThat(replays()).isZero();
    }

    @Test
    void aRecordedEventIsReplayedAsItWasRecorded() {
        ResultLedger ledger = ledger(bucket);
        TerminalEvent event = failed("r-recorded");

        assertThat(ledger.record(event).await().atMost(WAIT)).isSameAs(event);

        assertThat(ledger.find("r-recorded").await().atMost(WAIT)).contains(event);
        assertThat(replays()).as("a replay is counted").isEqualTo(1);
        assertThat(ledger.peek("r-recorded").await().atMost(WAIT)).contains(event);
        assertThat(replays()).as("a status query is no replay").isEqualTo(1);
    }

    @Test
    void aRecordThatIsNoEventStopsTheRequestWithAStorageError() {
        ResultLedger ledger = ledger(bucket);
        put("results/r-garbled.json", "not an event");

        assertThatThrownBy(() -> ledger.find("r-garbled").await().atMost(WAIT))
                .isInstanceOfSatisfying(RequestFailure.class, failure -> assertThat(failure.code())
                        .isEqualTo(ErrorCode.STORAGE_ERROR));
    }

    @Test
    void aStoreThatRefusesTheReadIsAStorageErrorNotAMissingRecord() {
        store.createBucket(bucket);
        // A key the store does not take: its HEAD is refused (403), which is no "no such key" (404).
        try (S3AsyncClient refused = S3AsyncClient.builder()
                .endpointOverride(store.endpoint())
                .forcePathStyle(true)
                .region(Region.of(store.region()))
                .credentialsProvider(
                        StaticCredentialsProvider.create(AwsBasicCredentials.create(store.accessKey(), "wrong")))
                .build()) {
            ResultLedger ledger = ledger(refused, bucket);

            assertThatThrownBy(() -> ledger.find("r-refused").await().atMost(WAIT))
                    .isInstanceOfSatisfying(RequestFailure.class, failure -> {
                        assertThat(failure.code()).isEqualTo(ErrorCode.STORAGE_ERROR);
                        assertThat(failure.getMessage()).contains("not sent to the gateway");
                    });
        }
    }

    @Test
    void aRecordThatCannotBeWrittenStillGivesTheEvent() {
        ResultLedger ledger = ledger("no-such-bucket-" + UUID.randomUUID());
        TerminalEvent event = failed("r-unwritten");

        assertThat(ledger.record(event).await().atMost(WAIT)).isSameAs(event);
    }

    @Test
    void variantsRecordedAreRecalledAndAnUnreadableOneIsCalledAgain() {
        ResultLedger ledger = ledger(bucket);
        ledger.recordVariant("r-variants", variant(1, 1)).await().atMost(WAIT);
        ledger.recordVariant("r-variants", variant(2, 0)).await().atMost(WAIT);
        put("results/r-variants/3.json", "{\"variant\": 0}");

        List<VariantOutcome> recalled = ledger.variants("r-variants").await().atMost(WAIT);

        assertThat(recalled)
                .as("variant 2 made no call and is not recorded; variant 3's record is unreadable")
                .containsExactly(variant(1, 1));
        assertThat(ledger.find("r-variants").await().atMost(WAIT))
                .as("a variant's record is not the request's")
                .isEmpty();
    }

    @Test
    void aRecordsKeyTheStoreMustNotBeSentIsNeitherWrittenNorLookedUp() {
        store.createBucket(bucket);
        // Result documents under a prefix whose keys the store's key check refuses (a doubled '/').
        ImageStore doubled = new ImageStore(
                s3,
                null,
                TestConfig.settings(
                        StorageSettings.class,
                        Map.of(
                                "image-worker.storage.bucket",
                                bucket,
                                "image-worker.storage.result-prefix",
                                "results//")));
        ImageStore images = new ImageStore(
                s3, null, TestConfig.settings(StorageSettings.class, Map.of("image-worker.storage.bucket", bucket)));
        byte[] json = "{}".getBytes(StandardCharsets.UTF_8);

        assertThatThrownBy(() -> doubled.putResult("r-1", json).await().atMost(WAIT))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty segment");
        assertThat(doubled.findResult("r-1").await().atMost(WAIT)).isEmpty();
        // The variant records of the id '.': 'results/./1.json'.
        assertThatThrownBy(() -> images.putVariant(".", 1, json).await().atMost(WAIT))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'.' segment");
        assertThat(images.findVariants(".").await().atMost(WAIT)).isEmpty();

        assertThat(s3.listObjectsV2(list -> list.bucket(bucket)).join().contents())
                .as("nothing written")
                .isEmpty();
    }

    private ResultLedger ledger(String bucketName) {
        if (bucketName.equals(bucket)) {
            store.createBucket(bucket);
        }
        return ledger(s3, bucketName);
    }

    private ResultLedger ledger(S3AsyncClient client, String bucketName) {
        ImageStore images = new ImageStore(
                client,
                null,
                TestConfig.settings(StorageSettings.class, Map.of("image-worker.storage.bucket", bucketName)));
        return new ResultLedger(
                images,
                TestCodec.codec(),
                new Patience(Duration.ofMillis(300), Duration.ofMillis(50), Duration.ofMillis(100)),
                TestMetrics.of(registry),
                new Tracing(OpenTelemetry.noop().getTracer("test")));
    }

    private double replays() {
        return registry.counter("image_worker_requests_replayed").count();
    }

    private void put(String key, String content) {
        s3.putObject(
                        put -> put.bucket(bucket).key(key).contentType("application/json"),
                        AsyncRequestBody.fromString(content, StandardCharsets.UTF_8))
                .join();
    }

    private static TerminalEvent failed(String requestId) {
        return new TerminalEvent.Failed(
                requestId,
                "generate",
                new TerminalEvent.Error(ErrorCode.REJECTED, "refused by the gateway", false, 400, "{}"),
                null,
                null,
                1,
                new Billing(1, 1, 0),
                new TerminalEvent.Timings(
                        Instant.parse("2026-01-01T00:00:00Z"),
                        Instant.parse("2026-01-01T00:00:01Z"),
                        Instant.parse("2026-01-01T00:00:03Z"),
                        2000L,
                        null),
                Map.of("k", "v"),
                null);
    }

    private static VariantOutcome variant(int index, int attempts) {
        return new VariantOutcome(
                index,
                null,
                null,
                new TerminalEvent.Error(ErrorCode.REJECTED, "refused", false, 400, null),
                attempts,
                attempts == 0 ? Billing.NONE : new Billing(1, 1, 0),
                null,
                null);
    }
}
