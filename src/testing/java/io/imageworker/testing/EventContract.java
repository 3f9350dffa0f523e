package io.imageworker.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * The event contract as the worker serves it: the AsyncAPI document under {@code META-INF/resources/asyncapi/} and the
 * JSON Schemas it references, read through the document (so a wrong reference in it fails here too) and applied with
 * networknt's validator, formats (date-time, uri) included.
 */
public final class EventContract {

    /** Where the worker serves the document from (and so where it lies on the class path). */
    public static final String DOCUMENT = "classpath:META-INF/resources/asyncapi/asyncapi.yaml";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonSchemaFactory FACTORY = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V7);
    private static final SchemaValidatorsConfig CONFIG =
            SchemaValidatorsConfig.builder().formatAssertionsEnabled(true).build();

    private static final JsonSchema REQUEST = schema("messages/imageRequest/payload/schema");
    private static final JsonSchema COMPLETED = schema("messages/imageCompleted/payload/schema");
    private static final JsonSchema COMPLETED_HEADERS = schema("messages/imageCompleted/headers");
    private static final JsonSchema FAILED = schema("messages/imageFailed/payload/schema");
    private static final JsonSchema FAILED_HEADERS = schema("messages/imageFailed/headers");
    private static final JsonSchema DEAD_LETTER_HEADERS = schema("messages/deadLetter/headers");
    private static final JsonSchema STARTED = schema("messages/imageStarted/payload/schema");
    private static final JsonSchema STARTED_HEADERS = schema("messages/imageStarted/headers");

    private EventContract() {}

    /** A schema of the document's components, by its path below {@code components}. */
    public static JsonSchema schema(String componentPath) {
        JsonSchema schema = FACTORY.getSchema(SchemaLocation.of(DOCUMENT + "#/components/" + componentPath), CONFIG);
        schema.initializeValidators();
        return schema;
    }

    /** What is wrong with a request, by the contract (empty: nothing). */
    public static List<String> requestProblems(JsonNode request) {
        return messages(REQUEST.validate(request));
    }

    /**
     * What is wrong with a record read from a result topic or {@code image-status} (empty: nothing): its payload and
     * its headers against the message its {@code ce_type} names; a DLQ record's headers.
     */
    public static List<String> problems(ConsumerRecord<byte[], byte[]> record) {
        ObjectNode headers = JSON.createObjectNode();
        for (Header header : record.headers()) {
            headers.put(
                    header.key(), header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8));
        }
        if (record.topic().endsWith("dlq")) {
            return messages(DEAD_LETTER_HEADERS.validate(headers));
        }
        String type = headers.path("ce_type").asText();
        JsonSchema payload;
        JsonSchema headerSchema;
        switch (type) {
            case "image.completed" -> {
                payload = COMPLETED;
                headerSchema = COMPLETED_HEADERS;
            }
            case "image.failed" -> {
                payload = FAILED;
                headerSchema = FAILED_HEADERS;
            }
            case "image.started" -> {
                payload = STARTED;
                headerSchema = STARTED_HEADERS;
            }
            default -> {
                return List.of("ce_type '" + type + "' is not a result event of the contract");
            }
        }
        List<String> problems = new ArrayList<>(messages(headerSchema.validate(headers)));
        try {
            problems.addAll(messages(payload.validate(JSON.readTree(record.value()))));
        } catch (IOException e) {
            problems.add("not JSON: " + e.getMessage());
        }
        return problems;
    }

    private static List<String> messages(Set<ValidationMessage> messages) {
        return messages.stream().map(ValidationMessage::getMessage).sorted().toList();
    }
}
