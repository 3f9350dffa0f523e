package io.imageworker.reference;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.ImageSource;
import io.imageworker.contract.Operation;
import io.imageworker.image.ImageFormat;
import io.imageworker.storage.StorageSettings;
import io.imageworker.support.CpuWork;
import io.imageworker.support.Patience;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.imageworker.testing.images.TestImages;
import io.opentelemetry.api.OpenTelemetry;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import io.vertx.core.buffer.Buffer;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** How {@link ReferenceLoader} hands {@code https://} references to {@link HttpsReferenceFetcher}. */
class ReferenceLoaderTest extends LocalServerTestSupport {

    private byte[] png;

    @BeforeEach
    void answerWithAPng() {
        png = HttpsReferenceFetcherTest.png();
        local.server().answering(request -> request.response().end(Buffer.buffer(png)));
    }

    @Test
    void loadsHttpsReferenceFromAllowedHostAsInspectedImage() {
        ReferenceLoader loader = loaderTrustingLocalServer();

        EditInputs inputs = loader.load(edit(List.of(https("/base.png")), https("/mask.png")))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .awaitItem(Duration.ofSeconds(20))
                .getItem();

        assertThat(inputs.references()).hasSize(1);
        assertThat(inputs.references().get(0).bytes()).isEqualTo(png);
        assertThat(inputs.references().get(0).info().format()).isEqualTo(ImageFormat.PNG);
        assertThat(inputs.mask().info().format()).isEqualTo(ImageFormat.PNG);
    }

    @Test
    void namesRefusedHttpsReferenceByItsPosition() {
        ReferenceLoader loader = loaderTrustingLocalServer();
        ImageSource inline = new ImageSource(null, Base64.getEncoder().encodeToString(png), "image/png");
        ImageSource metadata = new ImageSource("https://169.254.169.254/latest/meta-data", null, null);

        Throwable failure = loader.load(edit(List.of(inline, inline, metadata), null))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .awaitFailure(Duration.ofSeconds(20))
                .getFailure();

        assertThat(failure)
                .isInstanceOf(ReferenceRefusedException.class)
                .hasMessageStartingWith(
                        "references[2]: host '169.254.169.254' is not in" + " IMAGE_WORKER_REFERENCE_ALLOWED_HOSTS");
    }

    @Test
    void refusesPlainHttpMaskNamingTheMask() {
        ReferenceLoader loader = loaderTrustingLocalServer();

        Throwable failure = loader.load(
                        edit(List.of(https("/base.png")), new ImageSource("http://localhost/mask.png", null, null)))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .awaitFailure(Duration.ofSeconds(20))
                .getFailure();

        assertThat(failure).hasMessage("mask: only https:// references are fetched, not http://");
    }

    @Test
    void readsNothingAfterTheFirstRefusedSourceAndNamesIt() {
        ReferenceLoader loader = loaderTrustingLocalServer();
        ImageSource gif = new ImageSource(null, Base64.getEncoder().encodeToString(TestImages.gif(8, 8)), "image/png");

        Throwable failure = loader.load(edit(List.of(https("/base.png"), gif, https("/later.png")), https("/mask.png")))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .awaitFailure(Duration.ofSeconds(20))
                .getFailure();

        assertThat(failure).hasMessageStartingWith("references[1]: is a GIF file");
        // One source at a time: the base was fetched, nothing after the refused one.
        assertThat(local.server().requests).hasValue(1);
    }

    @Test
    void acceptsASupportedFormatWhoseSizeCannotBeRead() {
        ReferenceLoader loader = loaderTrustingLocalServer();
        byte[] cut = java.util.Arrays.copyOf(png, 40);
        ImageSource inline = new ImageSource(null, Base64.getEncoder().encodeToString(cut), "image/png");

        EditInputs inputs = loader.load(edit(List.of(inline), null))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .awaitItem(Duration.ofSeconds(20))
                .getItem();

        assertThat(inputs.references().get(0).info().format()).isEqualTo(ImageFormat.PNG);
        assertThat(inputs.references().get(0).info().size()).isEmpty();
    }

    private ReferenceLoader loaderTrustingLocalServer() {
        WorkerConfig config = config("localhost", "5s");
        HttpsReferenceFetcher fetcher = trustingLocalServer(download("localhost", "5s"), reference("localhost", "5s"));
        // No s3:// reference in these tests: the store is never used.
        return new ReferenceLoader(
                null,
                fetcher,
                config,
                reference("localhost", "5s"),
                TestConfig.settings(StorageSettings.class),
                new Patience(Duration.ofSeconds(1), Duration.ofMillis(10), Duration.ofMillis(100)),
                new CpuWork(new WorkerThreads(), 1, 8),
                new Tracing(OpenTelemetry.noop().getTracer("test")));
    }

    private ImageSource https(String path) {
        return new ImageSource(local.server().url("localhost", path), null, null);
    }

    private static ImageRequest edit(List<ImageSource> references, ImageSource mask) {
        return new ImageRequest(
                "r-1", Operation.EDIT, "a cat", null, null, references, mask, "images/", null, Map.of(), 1, null, null);
    }
}
