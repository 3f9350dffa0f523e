package io.imageworker.reference;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.ImageSource;
import io.imageworker.contract.Operation;
import io.imageworker.storage.StorageSettings;
import io.imageworker.support.CpuWork;
import io.imageworker.support.Patience;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.opentelemetry.api.OpenTelemetry;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which {@code s3://} objects a producer's reference may read (issue 49), from the settings alone, and a refusal made
 * from them reads nothing from the store and says what a missing object's refusal says.
 */
class ReadableObjectsTest {

    private static Map<String, String> config(String mode, String prefixes) {
        Map<String, String> settings = new HashMap<>();
        settings.put("image-worker.producer-identity", mode);
        settings.put("image-worker.producers", "a,b");
        settings.put("image-worker.storage.allowed-key-prefixes", "images/,uploads/");
        settings.put("image-worker.reference.allowed-buckets", "images,assets");
        if (prefixes != null) {
            settings.put("image-worker.reference.prefixes", prefixes);
        }
        return settings;
    }

    @ParameterizedTest(name = "{0} {1} of {2}: {3}")
    @CsvSource({
        // topic mode, no shared place: the producer's own output under each output prefix, nothing else.
        "topic, images/images/a/r-1.png, a, true",
        "topic, images/uploads/a/r-1/2.png, a, true",
        "topic, images/images/b/r-1.png, a, false",
        "topic, images/images/ab/r-1.png, a, false",
        "topic, images/images/r-1.png, a, false",
        "topic, images/results/a/r-1.json, a, false",
        "topic, assets/logo.png, a, false",
        "topic, images/refs/a/r-1.png, a, false",
        // declared mode without prefixes: any key of an allowed bucket, as before.
        "declared, images/images/b/r-1.png, a, true",
        "declared, assets/logo.png, a, true",
        "declared, other/logo.png, a, false",
    })
    void withoutSharedPlaces(String mode, String object, String producer, boolean readable) {
        assertThat(mayRead(config(mode, null), producer, object)).isEqualTo(readable);
    }

    @ParameterizedTest(name = "{0} {1} of {2}: {3}")
    @CsvSource({
        "topic, assets/shared/logo.png, a, true",
        "topic, assets/shared-old/logo.png, a, false",
        "topic, images/images/a/r-1.png, a, true",
        "topic, images/images/b/r-1.png, a, false",
        "declared, assets/shared/logo.png, a, true",
        "declared, images/images/b/r-1.png, a, false",
        "declared, assets/logo.png, a, false",
    })
    void withASharedPlace(String mode, String object, String producer, boolean readable) {
        assertThat(mayRead(config(mode, "s3://assets/shared/"), producer, object))
                .isEqualTo(readable);
    }

    private static boolean mayRead(Map<String, String> config, String producer, String object) {
        int slash = object.indexOf('/');
        return new ReadableObjects(
                        TestConfig.worker(config),
                        TestConfig.settings(ReferenceSettings.class, config),
                        TestConfig.settings(StorageSettings.class, config))
                .mayRead(producer, object.substring(0, slash), object.substring(slash + 1));
    }

    @Test
    void anotherProducersOutputIsRefusedWithoutAReadAsIfItWereMissing() {
        // No store at all: a read would fail with a NullPointerException, not the refusal.
        ReferenceLoader loader = new ReferenceLoader(
                null,
                null,
                TestConfig.worker(config("topic", null)),
                TestConfig.settings(ReferenceSettings.class, config("topic", null)),
                TestConfig.settings(StorageSettings.class, config("topic", null)),
                new Patience(Duration.ofSeconds(1), Duration.ofMillis(10), Duration.ofMillis(100)),
                new CpuWork(new WorkerThreads(), 1, 8),
                new Tracing(OpenTelemetry.noop().getTracer("test")));
        String others = "s3://images/images/b/r-1.png";
        ImageRequest ofA = new ImageRequest(
                "r-2",
                Operation.EDIT,
                "a cat",
                null,
                null,
                List.of(new ImageSource(others, null, null)),
                null,
                "images/",
                null,
                Map.of(),
                1,
                "a",
                "a");

        Throwable failure = loader.load(ofA)
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .awaitFailure(Duration.ofSeconds(5))
                .getFailure();

        assertThat(failure)
                .isInstanceOf(ReferenceRefusedException.class)
                .hasMessage(ReferenceLoader.unreadable(others, "references[0]").getMessage())
                .hasMessage("references[0]: " + others + " " + ReferenceLoader.UNREADABLE);
    }
}
