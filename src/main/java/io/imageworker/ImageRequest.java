package io.imageworker;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * An {@code image-request} that has passed validation against the event contract.
 *
 * @param requestId the idempotency key
 * @param operation generate or edit
 * @param prompt the prompt, trimmed
 * @param size the size as the producer wrote it ({@code WIDTHxHEIGHT}, {@code W:H}, {@code auto}) or null
 * @param quality {@code high}, {@code medium}, {@code low} or null (not sent)
 * @param references the edit's image sources in order, the first being the image edited; empty for generate
 * @param mask the edit's mask, or null
 * @param keyPrefix where to store the image
 * @param deadline the instant after which the request must not start, or null
 * @param metadata echoed unchanged on the result
 * @param count how many variants to make, 1 to {@link #MAX_COUNT} (contract v1.1): one gateway call each, one
 *     terminal event
 */
public record ImageRequest(
        String requestId,
        Operation operation,
        String prompt,
        String size,
        String quality,
        List<ImageSource> references,
        ImageSource mask,
        String keyPrefix,
        Instant deadline,
        Map<String, String> metadata,
        int count) {

    /** The most variants one request may ask for. */
    public static final int MAX_COUNT = 8;
}
