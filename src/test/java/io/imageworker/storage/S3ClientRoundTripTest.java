package io.imageworker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.StoreProxy;
import io.imageworker.testing.StoreProxy.Exchange;
import io.imageworker.testing.TestConfig;
import io.imageworker.testing.infra.Infrastructure;
import io.imageworker.testing.infra.ManagedStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import software.amazon.awssdk.services.s3.S3AsyncClient;

/**
 * The S3 client the worker builds ({@link S3ClientProducer}), against a real S3 server (S3Proxy) through the recording
 * proxy, on each of its HTTP stacks: it stores, reads (a body larger than the native stack's read window, whole and by
 * range) and lists, and its uploads send their body at once, without asking for a {@code 100 Continue}.
 */
class S3ClientRoundTripTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @ParameterizedTest
    @EnumSource(StorageSettings.HttpClient.class)
    void theWorkersClientStoresReadsAndListsAndAsksForNoContinue(StorageSettings.HttpClient httpClient) {
        ManagedStore store = Infrastructure.get().s3();
        String bucket = "client-" + UUID.randomUUID();
        store.createBucket(bucket);
        // Through the recording proxy, which sees the headers each request came with.
        StoreProxy proxy = StoreProxy.shared(store.endpoint());
        S3ClientProducer producer = new S3ClientProducer(
                TestConfig.settings(
                        StorageSettings.class,
                        Map.of(
                                "image-worker.storage.bucket", bucket,
                                "image-worker.storage.http-client",
                                        httpClient.name().toLowerCase(Locale.ROOT),
                                "image-worker.storage.endpoint", proxy.endpoint(),
                                "image-worker.storage.region", store.region(),
                                "image-worker.storage.access-key-id", store.accessKey(),
                                "image-worker.storage.secret-access-key", store.secretKey())),
                new WorkerThreads());
        S3AsyncClient s3 = producer.s3();
        try {
            ImageStore images = new ImageStore(
                    s3,
                    null,
                    TestConfig.settings(StorageSettings.class, Map.of("image-worker.storage.bucket", bucket)));
            // Above the 1 MiB from which the SDK asks for a 100 Continue unless told not to, as most images are, and
            // above the native stack's read window.
            byte[] image = new byte[(int) S3ClientProducer.READ_WINDOW_BYTES + 200_000];
            new Random(7).nextBytes(image);
            // A key with what path-style URLs and signatures must escape: spaces, '+', '=', non-ASCII.
            String name = UUID.randomUUID().toString();
            String key = "images/a b+c=d/é-" + name + ".png";

            images.putImage(key, image, "image/png", Map.of("sha256", "x"))
                    .await()
                    .atMost(WAIT);
            assertThat(proxy.exchangesFor(name))
                    .extracting(Exchange::method, Exchange::status, Exchange::expect)
                    .as("the upload sends its body at once, no 100 Continue asked for")
                    .containsExactly(tuple("PUT", 200, null));
            images.putResult("r-fixed", "{}".getBytes(StandardCharsets.UTF_8))
                    .await()
                    .atMost(WAIT);
            images.putVariant("r-fixed", 2, "{}".getBytes(StandardCharsets.UTF_8))
                    .await()
                    .atMost(WAIT);

            assertThat(images.getObject(bucket, key).await().atMost(WAIT)).hasValue(image);
            assertThat(images.readAtMost(bucket, key, 1_100_000).await().atMost(WAIT))
                    .hasValueSatisfying(head -> assertThat(head).hasSize(1_100_001));
            assertThat(images.sizeOf(bucket, key).await().atMost(WAIT)).hasValue((long) image.length);
            assertThat(images.findResult("r-fixed").await().atMost(WAIT)).isPresent();
            assertThat(images.findResult("r-none").await().atMost(WAIT)).isEqualTo(Optional.empty());
            assertThat(images.findVariants("r-fixed").await().atMost(WAIT)).hasSize(1);
            images.ping().await().atMost(WAIT);
        } finally {
            producer.close(s3);
        }
    }
}
