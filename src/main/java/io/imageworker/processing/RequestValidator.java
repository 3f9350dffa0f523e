package io.imageworker.processing;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.ImageSource;
import io.imageworker.contract.Operation;
import io.imageworker.contract.RequestId;
import io.imageworker.storage.ObjectAddress;
import io.imageworker.storage.StorageKeys;
import io.imageworker.storage.StorageSettings;
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
 *
 * <p>A refusal carries its error code: {@code INVALID_REFERENCE} for anything wrong with one image source (not an
 * object, neither or both of {@code uri} and {@code base64}, no {@code contentType}, a scheme other than {@code s3://}
 * or {@code https://}, an {@code s3://} address that breaks {@link ObjectAddress}'s rules), {@code INVALID_REQUEST}
 * for the rest, the {@code references} field as a whole included (missing for an edit, empty, over 16, on a generate).
 * Storage keys are built only from what passed here: the {@code requestId} ({@link RequestId}) and an {@code
 * output.keyPrefix} of plain segments under an allowed prefix; and every key the request may be stored under (its
 * images, its variants' records, its result document) must pass the store's key check ({@link StorageKeys#refusal}):
 * the ids {@code .} and {@code ..} are refused here, with any {@code count}, before any gateway call.
 */
@ApplicationScoped
public class RequestValidator {

    static final int MAX_PROMPT = 32_000;
    static final int MAX_REFERENCES = 16;
    static final int MAX_METADATA_BYTES = 16 * 1024;
    private static final Set<String> QUALITIES = Set.of("high", "medium", "low");
    private static final Pattern KEY_PREFIX = Pattern.compile("[A-Za-z0-9._/-]{0,512}");
    /** The longest part of a producer's value repeated in a refusal: the message travels back in an event. */
    private static final int MAX_QUOTED = 64;

    private final List<String> allowedPrefixes;
    private final String defaultPrefix;
    private final String resultPrefix;
    /** Whether a request's id is unique only within its producer, its topic's ({@code producer-identity=topic}). */
    private final boolean idsPerProducer;
    /** The producers of {@code IMAGE_WORKER_PRODUCERS} in {@code topic} mode (none otherwise). */
    private final java.util.Set<String> producers;

    RequestValidator(WorkerConfig config, StorageSettings storage) {
        this.idsPerProducer = config.producerIdentity() == WorkerConfig.ProducerIdentity.topic;
        this.defaultPrefix = storage.keyPrefix();
        this.resultPrefix = storage.resultPrefix();
        this.allowedPrefixes = storage.allowedKeyPrefixes().orElse(List.of(defaultPrefix));
        this.producers = idsPerProducer
                ? config.producers().orElse(List.of()).stream()
                        .map(String::trim)
                        .collect(java.util.stream.Collectors.toUnmodifiableSet())
                : java.util.Set.of();
    }

    /**
     * The request's metadata as an event may echo it: only when it follows the contract (an object of strings, at
     * most 16 KiB serialized); otherwise none. A refusal echoing whatever it was sent could be larger than any record
     * Kafka takes, and a result that cannot be published holds its partition.
     */
    public static Map<String, String> echoableMetadata(JsonNode json) {
        try {
            return metadata(json);
        } catch (Refusal refusal) {
            return Map.of();
        }
    }

    /**
     * The operation as an event may echo it: its name when the request names one of the contract's operations ({@code
     * generate} when it names none), otherwise null, which leaves it out of the event.
     */
    public static String echoableOperation(JsonNode json) {
        JsonNode node = json.get("operation");
        if (node == null || node.isNull()) {
            return Operation.GENERATE.wireName();
        }
        return node.isTextual()
                ? Operation.fromWire(node.asText()).map(Operation::wireName).orElse(null)
                : null;
    }

    /**
     * The producer as an event may echo it (contract v1.2): the request's {@code producer} when it follows the rule,
     * otherwise null, which leaves it out of the event (as when the request names none).
     */
    public static String echoableProducer(JsonNode json) {
        JsonNode node = json.get("producer");
        return node != null
                        && node.isTextual()
                        && ImageRequest.PRODUCER.matcher(node.asText()).matches()
                ? node.asText()
                : null;
    }

    /** The accepted request, or the reason it breaks the contract. */
    public Result validate(JsonNode json) {
        try {
            return new Result.Valid(read(json));
        } catch (Refusal refusal) {
            return new Result.Invalid(refusal.code, refusal.getMessage());
        }
    }

    private ImageRequest read(JsonNode json) {
        JsonNode id = json.path("requestId");
        String requestId = id.isTextual() ? id.asText() : null;
        if (!RequestId.isValid(requestId)) {
            throw new Refusal("requestId must be " + RequestId.RULE);
        }
        String operationName = optionalText(json, "operation");
        Operation operation = Operation.fromWire(operationName)
                .orElseThrow(() -> new Refusal("operation must be 'generate' or 'edit', not " + quote(operationName)));
        String given = optionalText(json, "prompt");
        String prompt = given == null ? "" : trimmed(given);
        if (prompt.isEmpty()) {
            throw new Refusal("prompt is required");
        }
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
        String keyPrefix = keyPrefix(json);
        int count = count(json);
        String producer = producer(json);
        String scope = idScope(idsPerProducer, producer);
        StorageKeys.refusal(keyPrefix, resultPrefix, scope, requestId, count).ifPresent(reason -> {
            throw new Refusal(reason);
        });
        return new ImageRequest(
                requestId,
                operation,
                prompt,
                size,
                quality,
                references,
                mask,
                keyPrefix,
                deadline(json),
                metadata(json),
                count,
                producer,
                scope);
    }

    /**
     * The producer a request's id is unique within: with {@code idsPerProducer} (the producer taken from the topic,
     * which has set the request's {@code producer} to it), its producer ({@code default} when it names none); otherwise
     * none, ids being unique across producers.
     */
    public static String idScope(boolean idsPerProducer, String producer) {
        return idsPerProducer ? (producer == null ? ImageRequest.DEFAULT_PRODUCER : producer) : null;
    }

    /**
     * {@code producer} (contract v1.2): absent (or null) is none, the {@code default} producer; otherwise 1 to 64
     * characters of {@code [A-Za-z0-9._-]}.
     */
    private static String producer(JsonNode json) {
        String producer = optionalText(json, "producer");
        if (producer != null && !ImageRequest.PRODUCER.matcher(producer).matches()) {
            throw new Refusal("producer must be 1 to 64 characters of [A-Za-z0-9._-], not " + quote(producer));
        }
        return producer;
    }

    /**
     * {@code count}: absent (or null, like every optional field) is 1. An integer of JSON Schema's kind: a number with
     * no fraction ({@code 2} or {@code 2.0}); a string, a fraction or a number outside 1 to 8 is refused.
     */
    private static int count(JsonNode json) {
        JsonNode node = json.get("count");
        if (node == null || node.isNull()) {
            return 1;
        }
        if (!node.isNumber()
                || !node.canConvertToExactIntegral()
                || node.decimalValue().compareTo(java.math.BigDecimal.ONE) < 0
                || node.decimalValue().compareTo(java.math.BigDecimal.valueOf(ImageRequest.MAX_COUNT)) > 0) {
            throw new Refusal("count must be an integer from 1 to " + ImageRequest.MAX_COUNT);
        }
        return node.intValue();
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

    /** One image source; whatever is wrong with it is an {@code INVALID_REFERENCE}. */
    private static ImageSource source(JsonNode node, String field) {
        try {
            return checkedSource(node, field);
        } catch (Refusal refusal) {
            throw new Refusal(ErrorCode.INVALID_REFERENCE, refusal.getMessage());
        }
    }

    private static ImageSource checkedSource(JsonNode node, String field) {
        if (!node.isObject()) {
            throw new Refusal(field + " must be an object with 'uri', or 'base64' and 'contentType'");
        }
        String uri = optionalText(node, "uri", field);
        String base64 = optionalText(node, "base64", field);
        String contentType = optionalText(node, "contentType", field);
        if ((uri == null) == (base64 == null)) {
            throw new Refusal(field + " must have exactly one of 'uri' and 'base64'");
        }
        if (uri != null && uri.startsWith(ObjectAddress.SCHEME)) {
            try {
                ObjectAddress.parse(uri);
            } catch (IllegalArgumentException e) {
                throw new Refusal(field + ".uri " + quote(uri) + " " + e.getMessage());
            }
        } else if (uri != null && !uri.startsWith("https://")) {
            throw new Refusal(field + ".uri must be an s3:// or https:// address: its source is not allowed");
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
        if (!KEY_PREFIX.matcher(prefix).matches() || !plainSegments(prefix)) {
            throw new Refusal("output.keyPrefix may hold only [A-Za-z0-9._/-] in segments that are neither empty"
                    + " (no leading or doubled '/') nor '.' or '..'");
        }
        if (allowedPrefixes.stream().noneMatch(prefix::startsWith)) {
            throw new Refusal(
                    "output.keyPrefix must fall under an allowed prefix: " + String.join(", ", allowedPrefixes));
        }
        if (idsPerProducer) {
            keyPrefixOfAProducer(prefix);
        }
        return prefix;
    }

    /**
     * In {@code topic} mode a request's keys are {@code <keyPrefix><producer>/...}: a prefix that does not end with
     * {@code /}, or that holds a producer's name as a segment, could make one producer's key another's ({@code
     * images/a} and producer {@code b} write under {@code images/ab/}, producer {@code ab}'s; {@code images/a/} and
     * producer {@code b} under {@code images/a/b/}, where {@code a}'s request {@code b} keeps its variants). With a
     * prefix ending with {@code /} and no producer's name in it, two producers' keys always differ in the producer's
     * segment, and one producer's two keys in what follows it.
     */
    private void keyPrefixOfAProducer(String prefix) {
        if (!prefix.isEmpty() && !prefix.endsWith("/")) {
            throw new Refusal("output.keyPrefix must end with '/' here: the producer's name follows it in every key");
        }
        for (String segment : prefix.split("/")) {
            if (producers.contains(segment)) {
                throw new Refusal("output.keyPrefix must not hold a producer's name as a segment here: the producer's"
                        + " name follows it in every key");
            }
        }
    }

    /** Whether every segment of a prefix is a name: the last may be empty (a prefix ending with '/'). */
    private static boolean plainSegments(String prefix) {
        String[] segments = prefix.split("/", -1);
        for (int i = 0; i < segments.length; i++) {
            String segment = segments[i];
            boolean last = i == segments.length - 1;
            if (segment.isEmpty() && !last || segment.equals(".") || segment.contains("..")) {
                return false;
            }
        }
        return true;
    }

    /**
     * The text without the spaces and control characters at its ends: Unicode spaces (no-break spaces included) as
     * well as the ASCII ones, so that a prompt of nothing but such characters is no prompt.
     */
    private static String trimmed(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && isPadding(text.charAt(start))) {
            start++;
        }
        while (end > start && isPadding(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(start, end);
    }

    private static boolean isPadding(char c) {
        return Character.isWhitespace(c) || Character.isSpaceChar(c) || Character.isISOControl(c);
    }

    /** A producer's value in a refusal, quoted and bounded. */
    private static String quote(String value) {
        return "'" + bounded(value) + "'";
    }

    private static String bounded(String value) {
        return value.length() <= MAX_QUOTED ? value : value.substring(0, MAX_QUOTED) + "...";
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
                throw new Refusal("metadata." + bounded(entry.getKey()) + " must be a string");
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

        /**
         * The request breaks the contract; the message names the field.
         *
         * @param code {@code INVALID_REFERENCE} when an image source is at fault, otherwise {@code INVALID_REQUEST}
         */
        record Invalid(ErrorCode code, String message) implements Result {}
    }

    private static final class Refusal extends RuntimeException {
        private final ErrorCode code;

        Refusal(String message) {
            this(ErrorCode.INVALID_REQUEST, message);
        }

        Refusal(ErrorCode code, String message) {
            super(message, null, false, false);
            this.code = code;
        }
    }
}
