package io.imageworker;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;
import java.util.Map;

/**
 * One {@code image-request} as a producer wrote it, before validation. Unknown fields are ignored (forward
 * compatible); every field may be missing or of the wrong shape until {@code RequestValidator} has accepted it.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ImageRequest(
        String requestId,
        String operation,
        String prompt,
        String size,
        String quality,
        List<ImageSource> references,
        ImageSource mask,
        Output output,
        String deadline,
        Map<String, String> metadata) {

    /** Where the producer wants the image stored. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Output(String keyPrefix) {}
}
