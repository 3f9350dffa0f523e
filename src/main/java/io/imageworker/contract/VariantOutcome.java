package io.imageworker.contract;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * How one variant of a request with {@code count} ended: stored ({@link #image} set) or failed ({@link #error} set),
 * and what its calls cost. For {@code count} above 1, the ledger records each as it ends, so that a redelivered
 * request calls the gateway only for the variants without one.
 *
 * @param variant its number, 1 to {@code count}; variant {@code i} is stored under {@code <prefix><requestId>-<i>.<ext>}
 *     when {@code count} is above 1
 * @param image where the image is, when it was stored
 * @param size the size asked for, sent and (when stored) read from the bytes
 * @param error why it gave no image, when it failed
 * @param attempts gateway calls made for it
 * @param billing what they cost
 * @param gatewayMs time spent in its calls, when it made any
 * @param storeMs time spent storing its image, when it was stored
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record VariantOutcome(
        int variant,
        TerminalEvent.StoredImage image,
        TerminalEvent.SizeReport size,
        TerminalEvent.Error error,
        int attempts,
        Billing billing,
        Long gatewayMs,
        Long storeMs) {

    /** Whether it gave a stored image. */
    @JsonIgnore
    public boolean delivered() {
        return image != null;
    }
}
