package io.imageworker.processing;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.ImageRequest;
import io.imageworker.ImageSource;
import io.imageworker.Operation;
import io.imageworker.config.WorkerConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks a readable request against the event contract, field by field, so that every refusal names the field
 * and costs no gateway call. Sizes and image sources are checked further where they are resolved.
 */
@ApplicationScoped
public class RequestValidator {

    static final Pattern REQUEST_ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
    static final int MAX_PROMPT = 32_000;
    static final int MAX_REFERENCES = 16;
    static final int MAX_METADATA_BYTES = 16 * 1024;
    private static final Set<String> QUALITIES = Set.of("high", "medium", "low");
    private static final Pattern KEY_PREFIX = Pattern.compile("[A-Za-z0-9._/-]{0,512}");

    private final List<String> allowedPrefixes;
    private final String defaultPrefix;

    RequestValidator(WorkerConfig config) {
        this.defaultPrefix = config.storage().keyPrefix();
        this.allowedPrefixes = config.storage().allowedKeyPrefixes().orElse(List.of(defaultPrefix));
    }

    /** The accepted request, or the reason it breaks the contract. */
    public Result validate(JsonNode json) {
        try {
            return new Result.Valid(read(json));
        } catch (Refusal refusal) {
            return new Result.Invalid(refusal.getMessage());
        }
    }

    private ImageRequest read(JsonNode json) {
        String requestId = json.path("requestId").asText();
        if (!REQUEST_ID.matcher(requestId).matches()) {
            throw new Refusal("requestId must be 1 to 128 characters of [A-Za-z0-9._:-]");
        }
        String operationName = optionalText(json, "operation");
        Operation operation = Operation.fromWire(operationName)
                .orElseThrow(() -> new Refusal("operation must be 'generate' or 'edit', not '" + operationName + "'"));
        String prompt = optionalText(json, "prompt");
        if (prompt == null || prompt.isBlank()) {
            throw new Refusal("prompt is required");
        }
        prompt = prompt.trim();
        if (prompt.length() > MAX_PROMPT) {
            throw new Refusal("prompt is longer than " + MAX_PROMPT + " characters");
        }
        String size = optionalText(json, "size");
        String quality = optionalText(json, "quality");
        if (quality != null && !QUALITIES.contains(quality)) {
            throw new Refusal("quality must be one of high, medium, low");
        }
        List<ImageSource> references = sources(json, operation);
        ImageSource mask = null;
        if (present(json, "mask")) {
            if (operation != Operation.EDIT) {
                throw new Refusal("mask is only allowed with operation 'edit'");
            }
            mask = source(json.get("mask"), "mask");
        }
        return new ImageRequest(
                requestId,
                operation,
                prompt,
                size,
                quality,
                references,
                mask,
                keyPrefix(json),
                deadline(json),
                metadata(json));
    }

    private List<ImageSource> sources(JsonNode json, Operation operation) {
        if (!present(json, "references")) {
            if (operation == Operation.EDIT) {
                throw new Refusal("references is required for operation 'edit' (1 to " + MAX_REFERENCES + " images)");
            }
            return List.of();
        }
        JsonNode array = json.get("references");
        if (operation != Operation.EDIT) {
            throw new Refusal("references is only allowed with operation 'edit'");
        }
        if (!array.isArray() || array.isEmpty() || array.size() > MAX_REFERENCES) {
            throw new Refusal("references must be an array of 1 to " + MAX_REFERENCES + " image sources");
        }
        List<ImageSource> sources = new ArrayList<>();
        for (int i = 0; i < array.size(); i++) {
            sources.add(source(array.get(i), "references[" + i + "]"));
        }
        return Collections.unmodifiableList(sources);
    }

    private static ImageSource source(JsonNode node, String field) {
        if (!node.isObject()) {
            throw new Refusal(field + " must be an object with 'uri', or 'base64' and 'contentType'");
        }
        String uri = optionalText(node, "uri", field);
        String base64 = optionalText(node, "base64", field);
        String contentType = optionalText(node, "contentType", field);
        if ((uri == null) == (base64 == null)) {
            throw new Refusal(field + " must have exactly one of 'uri' and 'base64'");
        }
        if (uri != null && !uri.startsWith("s3://") && !uri.startsWith("https://")) {
            throw new Refusal(field + ".uri must be an s3:// or https:// address");
        }
        if (base64 != null && contentType == null) {
            throw new Refusal(field + ".contentType is required with base64");
        }
        return new ImageSource(uri, base64, contentType);
    }

    private String keyPrefix(JsonNode json) {
        JsonNode output = json.get("output");
        if (output == null || output.isNull()) {
            return defaultPrefix;
        }
        if (!output.isObject()) {
            throw new Refusal("output must be an object");
        }
        String prefix = optionalText(output, "keyPrefix", "output");
        if (prefix == null) {
            return defaultPrefix;
        }
        if (!KEY_PREFIX.matcher(prefix).matches() || prefix.contains("..") || prefix.startsWith("/")) {
            throw new Refusal("output.keyPrefix may hold only [A-Za-z0-9._/-], no '..' and no leading '/'");
        }
        if (allowedPrefixes.stream().noneMatch(prefix::startsWith)) {
            throw new Refusal(
                    "output.keyPrefix must fall under an allowed prefix: " + String.join(", ", allowedPrefixes));
        }
        return prefix;
    }

    private static Instant deadline(JsonNode json) {
        String deadline = optionalText(json, "deadline");
        if (deadline == null) {
            return null;
        }
        try {
            return OffsetDateTime.parse(deadline).toInstant();
        } catch (DateTimeParseException e) {
            throw new Refusal("deadline must be an RFC 3339 instant such as 2026-01-31T12:00:00Z");
        }
    }

    private static Map<String, String> metadata(JsonNode json) {
        JsonNode node = json.get("metadata");
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject()) {
            throw new Refusal("metadata must be an object of strings");
        }
        if (node.toString().getBytes(StandardCharsets.UTF_8).length > MAX_METADATA_BYTES) {
            throw new Refusal("metadata is larger than 16 KiB serialized");
        }
        Map<String, String> metadata = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            if (!entry.getValue().isTextual()) {
                throw new Refusal("metadata." + entry.getKey() + " must be a string");
            }
            metadata.put(entry.getKey(), entry.getValue().asText());
        }
        return Collections.unmodifiableMap(metadata);
    }

    private static boolean present(JsonNode json, String field) {
        return json.has(field) && !json.get(field).isNull();
    }

    private static String optionalText(JsonNode json, String field) {
        return optionalText(json, field, null);
    }

    private static String optionalText(JsonNode json, String field, String parent) {
        JsonNode node = json.get(field);
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isTextual()) {
            throw new Refusal((parent == null ? "" : parent + ".") + field + " must be a string");
        }
        return node.asText();
    }

    /** What validation decided. */
    public sealed interface Result {
        /** The request is accepted. */
        record Valid(ImageRequest request) implements Result {}

        /** The request breaks the contract; the message names the field. */
        record Invalid(String message) implements Result {}
    }

    private static final class Refusal extends RuntimeException {
        Refusal(String message) {
            super(message, null, false, false);
        }
    }
}
