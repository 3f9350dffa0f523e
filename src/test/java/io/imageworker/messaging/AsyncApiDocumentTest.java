package io.imageworker.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.imageworker.testing.EventContract;
import io.imageworker.testing.WorkerTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The event contract as a document: the AsyncAPI 3.0 file and its JSON Schemas are kept once, under
 * {@code src/main/resources/META-INF/resources/asyncapi/}, served by every worker at {@code /asyncapi/}, and hold for
 * their own examples, the examples of the README and of {@code docs/}, and the compose demo's requests. (Every event
 * the pipeline tests receive is checked against them too, by {@code KafkaTestClient}.)
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class AsyncApiDocumentTest {

    private static final Path SOURCES = Path.of("src/main/resources/META-INF/resources/asyncapi");
    private static final ObjectMapper JSON = new ObjectMapper();

    @TestHTTPResource("/asyncapi/")
    URI served;

    @Test
    void theWorkerServesTheDocumentAndItsSchemasAsKept() throws Exception {
        HttpClient http =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        List<Path> files;
        try (Stream<Path> walk = Files.walk(SOURCES)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        assertThat(files).hasSize(4);

        for (Path file : files) {
            URI uri = served.resolve(SOURCES.relativize(file).toString().replace('\\', '/'));
            HttpResponse<byte[]> response =
                    http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofByteArray());

            assertThat(response.statusCode()).as("%s", uri).isEqualTo(200);
            assertThat(response.body()).as("%s", uri).isEqualTo(Files.readAllBytes(file));
        }
    }

    @Test
    void isAnAsyncApi3DocumentOfTheFourTopicsAndTheThreeOptionalOnes() throws IOException {
        JsonNode document = document();

        assertThat(document.path("asyncapi").asText()).isEqualTo("3.0.0");
        List<String> addresses = new ArrayList<>();
        document.path("channels")
                .forEach(channel -> addresses.add(channel.path("address").asText()));
        assertThat(addresses)
                .containsExactlyInAnyOrder(
                        "image-request",
                        "image-request-priority",
                        "image-completed",
                        "image-failed",
                        "image-request-dlq",
                        "image-status",
                        "image-cancel",
                        "image-request.{producer}",
                        "image-request-priority.{producer}",
                        "image-cancel.{producer}");
        // Every local reference points at something.
        for (String reference : references(document)) {
            if (reference.startsWith("#/")) {
                assertThat(document.at(reference.substring(1)).isMissingNode())
                        .as(reference)
                        .isFalse();
            } else {
                assertThat(SOURCES.resolve(reference)).as(reference).isRegularFile();
            }
        }
        document.path("operations")
                .forEach(operation ->
                        assertThat(operation.path("action").asText()).isIn("send", "receive"));
    }

    private static List<String> references(JsonNode node) {
        List<String> found = new ArrayList<>();
        if (node.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                if (field.getKey().equals("$ref")) {
                    found.add(field.getValue().asText());
                } else {
                    found.addAll(references(field.getValue()));
                }
            }
        } else if (node.isArray()) {
            node.forEach(child -> found.addAll(references(child)));
        }
        return found;
    }

    @Test
    void everyExampleOfTheDocumentKeepsItsOwnSchemas() throws IOException {
        JsonNode messages = document().path("components").path("messages");
        int examples = 0;
        for (Iterator<String> names = messages.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            for (JsonNode example : messages.path(name).path("examples")) {
                assertThat(EventContract.schema("messages/" + name + "/payload/schema")
                                .validate(example.path("payload")))
                        .as("%s example %s", name, example.path("name"))
                        .isEmpty();
                if (example.has("headers")) {
                    assertThat(EventContract.schema("messages/" + name + "/headers")
                                    .validate(example.path("headers")))
                            .isEmpty();
                }
                examples++;
            }
        }
        assertThat(examples).isGreaterThanOrEqualTo(5);
    }

    /**
     * Every JSON example of the README and of the documentation it links ({@code docs/}, but for the gateway's own
     * contract, whose JSON is the gateway's) is a request, an {@code image.started} or a result that keeps the
     * contract; the README itself shows a request and both results.
     */
    @Test
    void everyJsonExampleInTheReadmeAndTheDocsKeepsTheContract() throws IOException {
        List<Path> documents = new ArrayList<>(List.of(Path.of("README.md")));
        try (Stream<Path> docs = Files.list(Path.of("docs"))) {
            docs.filter(file -> file.toString().endsWith(".md"))
                    .filter(file -> !file.endsWith("gateway-contract.md"))
                    .sorted()
                    .forEach(documents::add);
        }
        Map<String, Integer> kinds = new TreeMap<>();
        for (Path document : documents) {
            Map<String, Integer> found = jsonExamplesKeepTheContract(document);
            found.forEach((kind, count) -> kinds.merge(kind, count, Integer::sum));
            if (document.equals(Path.of("README.md"))) {
                assertThat(found)
                        .as("the README's contract in short: a request and both results")
                        .containsKeys("request", "imageCompleted", "imageFailed");
            }
        }
        assertThat(kinds.getOrDefault("request", 0)).isGreaterThanOrEqualTo(2);
    }

    /** Checks each {@code json} block of one document against its message's schema; counts them by kind. */
    private static Map<String, Integer> jsonExamplesKeepTheContract(Path document) throws IOException {
        Matcher blocks = Pattern.compile("```json\\n(.*?)```", Pattern.DOTALL).matcher(Files.readString(document));
        Map<String, Integer> kinds = new TreeMap<>();
        while (blocks.find()) {
            JsonNode example = JSON.readTree(blocks.group(1));
            String kind = example.has("image")
                    ? "imageCompleted"
                    : example.has("error") ? "imageFailed" : example.has("attempt") ? "imageStarted" : "request";
            List<String> problems = kind.equals("request")
                    ? EventContract.requestProblems(example)
                    : EventContract.schema("messages/" + kind + "/payload/schema").validate(example).stream()
                            .map(Object::toString)
                            .toList();
            assertThat(problems).as("%s: %s", document, blocks.group(1)).isEmpty();
            kinds.merge(kind, 1, Integer::sum);
        }
        return kinds;
    }

    @Test
    void theComposeDemoSendsValidRequests() throws IOException {
        List<String> lines = Files.readAllLines(Path.of("deploy/demo/requests.jsonl"));

        assertThat(lines).isNotEmpty();
        for (String line : lines) {
            assertThat(EventContract.requestProblems(JSON.readTree(line)))
                    .as(line)
                    .isEmpty();
        }
    }

    @Test
    void refusesWhatBreaksTheContract() throws IOException {
        assertThat(EventContract.requestProblems(JSON.readTree("{\"requestId\":\"r-1\",\"prompt\":\"a\"}")))
                .isEmpty();
        for (String broken : List.of(
                "{\"prompt\":\"no id\"}",
                "{\"requestId\":\"r 1\",\"prompt\":\"a space in the id\"}",
                "{\"requestId\":\"r-1\"}",
                "{\"requestId\":\"r-1\",\"prompt\":\"   \"}",
                "{\"requestId\":\"r-1\",\"prompt\":\"a\",\"count\":9}",
                "{\"requestId\":\"r-1\",\"prompt\":\"a\",\"producer\":\"team a\"}",
                "{\"requestId\":\"r-1\",\"prompt\":\"a\",\"size\":\"big\"}",
                "{\"requestId\":\"r-1\",\"prompt\":\"a\",\"operation\":\"edit\"}",
                "{\"requestId\":\"r-1\",\"prompt\":\"a\",\"deadline\":\"tomorrow\"}",
                "{\"requestId\":\"r-1\",\"prompt\":\"a\",\"metadata\":{\"n\":1}}",
                "{\"requestId\":\"r-1\",\"prompt\":\"a\",\"mask\":{\"uri\":\"s3://b/k\",\"base64\":\"AA==\"}}")) {
            assertThat(EventContract.requestProblems(JSON.readTree(broken)))
                    .as(broken)
                    .isNotEmpty();
        }
    }

    @Test
    void aResultWithAMisspeltFieldOrAWrongHeaderIsCaught() throws IOException {
        ObjectNode completed = (ObjectNode) document()
                .at("/components/messages/imageCompleted/examples/0/payload")
                .deepCopy();
        JsonNode headers = document().at("/components/messages/imageCompleted/examples/0/headers");
        assertThat(EventContract.problems(record("image-completed", headers, completed)))
                .isEmpty();

        completed.set("atempts", completed.remove("attempts"));
        assertThat(EventContract.problems(record("image-completed", headers, completed)))
                .isNotEmpty();

        ObjectNode failedHeaders = ((ObjectNode) headers.deepCopy()).put("ce_type", "image.failed");
        JsonNode failed = document().at("/components/messages/imageFailed/examples/0/payload");
        assertThat(EventContract.problems(record("image-failed", failedHeaders, failed)))
                .isEmpty();
        assertThat(EventContract.problems(record("image-failed", failedHeaders.put("ce_source", "other"), failed)))
                .isNotEmpty();
    }

    private static ConsumerRecord<byte[], byte[]> record(String topic, JsonNode headers, JsonNode payload)
            throws IOException {
        ConsumerRecord<byte[], byte[]> record =
                new ConsumerRecord<>(topic, 0, 0L, null, JSON.writeValueAsBytes(payload));
        headers.fields().forEachRemaining(h -> record.headers()
                .add(new RecordHeader(h.getKey(), h.getValue().asText().getBytes(StandardCharsets.UTF_8))));
        return record;
    }

    private static JsonNode document() throws IOException {
        return new YAMLMapper().readTree(SOURCES.resolve("asyncapi.yaml").toFile());
    }
}
