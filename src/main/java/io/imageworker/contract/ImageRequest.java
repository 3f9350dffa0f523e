package io.imageworker.contract;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

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
 * @param producer who asked (contract v1.2), 1 to 64 characters of {@code [A-Za-z0-9._-]}, or null when the request
 *     names none ({@link #producerName()} is then {@value #DEFAULT_PRODUCER}); echoed on the result only when named
 * @param idScope the producer within which {@code requestId} is unique, when the producer is authenticated by its
 *     topic ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}, issue 49): its result document and images are then stored
 *     under it ({@link #storageId()}); null when ids are unique across producers (the default, {@code declared})
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
        int count,
        String producer,
        String idScope) {

    /** The most variants one request may ask for. */
    public static final int MAX_COUNT = 8;

    /** The producer of a request that names none (contract v1.2). */
    public static final String DEFAULT_PRODUCER = "default";

    /** The rule of a {@code producer} (contract v1.2). */
    public static final Pattern PRODUCER = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    /**
     * The name the request is stored under: its {@code requestId}, or {@code <idScope>/<requestId>} when its id is
     * unique only within its producer ({@link #scopedId}).
     */
    public String storageId() {
        return scopedId(idScope, requestId);
    }

    /**
     * The name a request of {@code requestId} is stored under within {@code scope} (null: none): {@code
     * <scope>/<requestId>}. Neither a producer nor an id holds a {@code /}, so a scoped name is no id, and no two
     * producers' names are the same.
     */
    public static String scopedId(String scope, String requestId) {
        return scope == null ? requestId : scope + "/" + requestId;
    }

    /** Who asked: the request's {@code producer}, or {@value #DEFAULT_PRODUCER} when it names none. */
    public String producerName() {
        return producer == null ? DEFAULT_PRODUCER : producer;
    }
}
