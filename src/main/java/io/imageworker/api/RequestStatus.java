package io.imageworker.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.imageworker.TerminalEvent;
import io.imageworker.processing.RequestStates;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The answer of {@code GET /requests/{requestId}}: where a request is, and for an ended one how it ended. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(
        name = "RequestStatus",
        description = "Where a request is. queued: this worker holds it (read ahead and waiting for its turn, or in"
                + " progress) and no gateway call of it has left yet;"
                + " calling: a gateway call of it has left (it may be retried, or its image stored); completed and"
                + " failed: its terminal event is recorded (a refusal before any gateway call too); unknown: no"
                + " record, and this worker does not hold it (it may not have arrived yet, or be held by another"
                + " replica).")
public record RequestStatus(
        @Schema(required = true, description = "The requestId asked about") String requestId,
        @Schema(
                        required = true,
                        enumeration = {"queued", "calling", "completed", "failed", "unknown"})
                String status,
        @Schema(
                        description = "completed: the stored image, as in image-completed (the first variant with"
                                + " count); its presigned url only with IMAGE_WORKER_STATUS_PRESIGNED_URLS=true")
                TerminalEvent.StoredImage image,
        @Schema(description = "completed with count above 1: every stored variant, in call order")
                List<TerminalEvent.StoredImage> images,
        @Schema(description = "completed or failed with count above 1: variants requested, delivered, failed")
                TerminalEvent.VariantTally variants,
        @Schema(description = "failed: the error of image-failed (code, message, retryable, gateway status and body)")
                TerminalEvent.Error error,
        @Schema(description = "completed or failed: when the request ended (timings.completedAt of its event)")
                Instant completedAt) {

    /** A request this worker holds, not ended yet. */
    static RequestStatus held(String requestId, RequestStates.State state) {
        return new RequestStatus(requestId, state.name().toLowerCase(Locale.ROOT), null, null, null, null, null);
    }

    /** A request with no record, which this worker does not hold. */
    static RequestStatus unknown(String requestId) {
        return new RequestStatus(requestId, "unknown", null, null, null, null, null);
    }

    /**
     * A request whose terminal event is recorded; the presigned URLs of its images only when {@code urls} says so (the
     * endpoint is unauthenticated).
     */
    static RequestStatus recorded(TerminalEvent event, boolean urls) {
        if (event instanceof TerminalEvent.Completed completed) {
            return new RequestStatus(
                    completed.requestId(),
                    "completed",
                    urls ? completed.image() : withoutUrl(completed.image()),
                    urls || completed.images() == null
                            ? completed.images()
                            : completed.images().stream()
                                    .map(RequestStatus::withoutUrl)
                                    .toList(),
                    completed.variants(),
                    null,
                    endedAt(completed.timings()));
        }
        TerminalEvent.Failed failed = (TerminalEvent.Failed) event;
        return new RequestStatus(
                failed.requestId(), "failed", null, null, failed.variants(), failed.error(), endedAt(failed.timings()));
    }

    private static TerminalEvent.StoredImage withoutUrl(TerminalEvent.StoredImage image) {
        return image == null
                ? null
                : new TerminalEvent.StoredImage(
                        image.bucket(),
                        image.key(),
                        image.uri(),
                        null,
                        image.contentType(),
                        image.width(),
                        image.height(),
                        image.bytes(),
                        image.sha256());
    }

    private static Instant endedAt(TerminalEvent.Timings timings) {
        return timings == null ? null : timings.completedAt();
    }
}
