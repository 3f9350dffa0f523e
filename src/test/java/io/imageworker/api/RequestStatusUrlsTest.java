package io.imageworker.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.contract.Billing;
import io.imageworker.contract.TerminalEvent;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The presigned URLs of a completed request in its status: given only when {@code IMAGE_WORKER_STATUS_PRESIGNED_URLS}
 * says so, for the first image and every variant alike; everything else of the images is given either way.
 */
class RequestStatusUrlsTest {

    private static final Instant AT = Instant.parse("2026-01-05T10:17:02Z");

    @Test
    void noUrlOfAnyVariantUnlessToldTo() {
        RequestStatus status = RequestStatus.recorded(completed(), false);

        assertThat(status.image().url()).isNull();
        assertThat(status.images()).extracting(TerminalEvent.StoredImage::url).containsOnlyNulls();
        assertThat(status.image().uri()).isEqualTo("s3://images/images/r-1/1.png");
        assertThat(status.images())
                .extracting(TerminalEvent.StoredImage::sha256)
                .containsExactly("a1", "a2");
    }

    @Test
    void everyUrlWhenToldTo() {
        TerminalEvent.Completed completed = completed();

        RequestStatus status = RequestStatus.recorded(completed, true);

        assertThat(status.image()).isEqualTo(completed.image());
        assertThat(status.images()).isEqualTo(completed.images());
    }

    private static TerminalEvent.Completed completed() {
        List<TerminalEvent.StoredImage> images = List.of(image(1), image(2));
        return new TerminalEvent.Completed(
                "r-1",
                "generate",
                images.get(0),
                images,
                new TerminalEvent.VariantTally(2, 2, 0),
                null,
                1,
                Billing.NONE,
                new TerminalEvent.Timings(AT, AT, AT, null, null),
                Map.of(),
                null);
    }

    private static TerminalEvent.StoredImage image(int variant) {
        String key = "images/r-1/" + variant + ".png";
        return new TerminalEvent.StoredImage(
                "images",
                key,
                "s3://images/" + key,
                "https://store.example/images/" + key + "?X-Amz-Signature=s" + variant,
                "image/png",
                64,
                64,
                100,
                "a" + variant);
    }
}
