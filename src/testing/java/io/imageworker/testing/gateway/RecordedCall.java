package io.imageworker.testing.gateway;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One call as the simulator saw it. A snapshot: a call still in flight shows {@code status} 0 and no
 * {@code finishedAt}.
 *
 * @param sequence arrival order, from 1 since the last reset
 * @param requestId the id sent in {@code X-Oneapi-Request-Id}
 * @param method HTTP method
 * @param path path as received (no query)
 * @param status status answered; 0 when no answer was sent (hang, client gave up, still in flight)
 * @param textFields JSON top-level fields (values as text; strings unquoted) or multipart text fields (first value)
 * @param forbiddenFields fields a client must not send (gateway contract §1) ({@code n}, {@code moderation}) that were present
 * @param fileParts multipart file parts in the order received
 * @param silentChanges what was done differently from what was asked, without a signal
 * @param responseForm how the image was returned ({@code B64} or {@code URL}); {@code null} when none was
 * @param requestedSize the {@code size} field as sent; {@code null} when absent
 * @param outputSize size of the returned image, {@code WIDTHxHEIGHT}; {@code null} when none was returned
 * @param imageUrl the returned {@code url}; {@code null} unless the form was {@code URL}
 * @param n the billing multiplier ({@code n} as sent, 1 when absent)
 * @param billed whether the call was charged
 * @param billedUnits quota units charged
 * @param concurrencyAtArrival image calls in flight when this one arrived, itself included (0 for other routes)
 * @param arrivedAt when the request line arrived
 * @param finishedAt when the answer was sent or the call ended; {@code null} while in flight
 * @param fault the injected fault this call took, or {@code null}
 * @param errorMessage the error message answered, or {@code null}
 * @param traceparent the W3C {@code traceparent} header the call carried, or {@code null}
 */
public record RecordedCall(
        long sequence,
        String requestId,
        String method,
        String path,
        int status,
        Map<String, String> textFields,
        List<String> forbiddenFields,
        List<FilePart> fileParts,
        List<SilentChange> silentChanges,
        ResponseForm responseForm,
        String requestedSize,
        String outputSize,
        String imageUrl,
        int n,
        boolean billed,
        long billedUnits,
        int concurrencyAtArrival,
        Instant arrivedAt,
        Instant finishedAt,
        Fault fault,
        String errorMessage,
        String traceparent) {

    /** Method and path, e.g. {@code POST /v1/images/generations}. */
    public String route() {
        return method + " " + path;
    }

    /** {@code true} for {@code POST /v1/images/generations} and {@code POST /v1/images/edits}. */
    public boolean isImageCall() {
        return "POST".equals(method) && (GatewayRoutes.GENERATIONS.equals(path) || GatewayRoutes.EDITS.equals(path));
    }

    /** The file names of the image parts that reached the simulated upstream, in the order it used them. */
    public List<String> usedImages() {
        return fileParts.stream()
                .filter(FilePart::used)
                .filter(p -> !p.fieldName().equals("mask"))
                .sorted((a, b) -> Integer.compare(a.usedPosition(), b.usedPosition()))
                .map(FilePart::filename)
                .toList();
    }

    /**
     * A multipart file part.
     *
     * @param fieldName form field name ({@code image[]}, {@code image}, {@code mask}...)
     * @param filename filename from {@code Content-Disposition}
     * @param declaredContentType the part's own {@code Content-Type} header, or {@code null}
     * @param extensionType the type the gateway derives from the filename extension (what upstream is told)
     * @param realType the type read from the magic bytes ({@code image/png}, {@code image/jpeg}, {@code image/webp},
     *     {@code image/gif}, else {@code application/octet-stream})
     * @param byteLength size in bytes
     * @param width pixel width when readable, else {@code null}
     * @param height pixel height when readable, else {@code null}
     * @param used whether it reached the simulated upstream
     * @param usedPosition 1-based position among the images upstream used; 0 when not used
     */
    public record FilePart(
            String fieldName,
            String filename,
            String declaredContentType,
            String extensionType,
            String realType,
            int byteLength,
            Integer width,
            Integer height,
            boolean used,
            int usedPosition) {}
}
