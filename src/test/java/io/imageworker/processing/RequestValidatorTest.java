package io.imageworker.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.ImageRequest;
import io.imageworker.Operation;
import io.imageworker.testing.TestConfig;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RequestValidatorTest {

    private final ObjectMapper mapper = new ObjectMapper();
    private final RequestValidator validator = new RequestValidator(
            TestConfig.worker(Map.of("image-worker.storage.allowed-key-prefixes", "images/,catalogue/")));

    private RequestValidator.Result validate(String json) throws Exception {
        return validator.validate(mapper.readTree(json));
    }

    private ImageRequest valid(String json) throws Exception {
        RequestValidator.Result result = validate(json);
        assertThat(result).isInstanceOf(RequestValidator.Result.Valid.class);
        return ((RequestValidator.Result.Valid) result).request();
    }

    private String refusal(String json) throws Exception {
        RequestValidator.Result result = validate(json);
        assertThat(result).isInstanceOf(RequestValidator.Result.Invalid.class);
        return ((RequestValidator.Result.Invalid) result).message();
    }

    @Test
    void acceptsAMinimalGenerateAndFillsTheDefaults() throws Exception {
        ImageRequest request = valid("{\"requestId\":\"r-1\",\"prompt\":\"  a red bicycle  \",\"extra\":1}");

        assertThat(request.operation()).isEqualTo(Operation.GENERATE);
        assertThat(request.prompt()).isEqualTo("a red bicycle");
        assertThat(request.keyPrefix()).isEqualTo("images/");
        assertThat(request.metadata()).isEmpty();
        assertThat(request.references()).isEmpty();
    }

    @Test
    void acceptsEveryDocumentedField() throws Exception {
        ImageRequest request = valid("{\"requestId\":\"r.2:x_y-z\",\"operation\":\"edit\",\"prompt\":\"p\","
                + "\"size\":\"16:9\",\"quality\":\"high\",\"references\":[{\"uri\":\"s3://images/a.png\"},"
                + "{\"base64\":\"AAAA\",\"contentType\":\"image/png\"}],\"mask\":{\"uri\":\"https://h/m.png\"},"
                + "\"output\":{\"keyPrefix\":\"catalogue/2026/\"},\"deadline\":\"2030-01-01T00:00:00+01:00\","
                + "\"metadata\":{\"sku\":\"A-17\"}}");

        assertThat(request.references()).hasSize(2);
        assertThat(request.mask().uri()).isEqualTo("https://h/m.png");
        assertThat(request.keyPrefix()).isEqualTo("catalogue/2026/");
        assertThat(request.deadline()).isEqualTo(Instant.parse("2029-12-31T23:00:00Z"));
        assertThat(request.metadata()).containsEntry("sku", "A-17");
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "{\"requestId\":\"has space\",\"prompt\":\"p\"}|requestId",
                "{\"requestId\":\"r\",\"prompt\":\"   \"}|prompt",
                "{\"requestId\":\"r\"}|prompt",
                "{\"requestId\":\"r\",\"prompt\":42}|prompt",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"upscale\"}|operation",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"quality\":\"ultra\"}|quality",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"edit\"}|references",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"edit\",\"references\":[]}|references",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"references\":[{\"uri\":\"s3://b/k\"}]}|references",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"edit\",\"references\":[{\"uri\":\"ftp://x\"}]}|references[0].uri",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"edit\",\"references\":[{\"base64\":\"AA\"}]}|references[0].contentType",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"mask\":{\"uri\":\"s3://b/k\"}}|mask",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"output\":{\"keyPrefix\":\"secret/\"}}|output.keyPrefix",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"output\":{\"keyPrefix\":\"images/../x\"}}|output.keyPrefix",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"deadline\":\"tomorrow\"}|deadline",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"metadata\":{\"n\":1}}|metadata.n",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"metadata\":[]}|metadata"
            })
    void refusesABrokenFieldAndNamesIt(String json, String field) throws Exception {
        assertThat(refusal(json)).startsWith(field);
    }

    @Test
    void refusesMoreThanSixteenReferences() throws Exception {
        String refs = "{\"uri\":\"s3://images/a.png\"},".repeat(17);
        assertThat(refusal("{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"edit\",\"references\":["
                        + refs.substring(0, refs.length() - 1) + "]}"))
                .startsWith("references");
    }

    @Test
    void refusesAPromptOverThirtyTwoThousandCharactersAndMetadataOverSixteenKiB() throws Exception {
        assertThat(refusal("{\"requestId\":\"r\",\"prompt\":\"" + "p".repeat(32_001) + "\"}"))
                .startsWith("prompt");
        assertThat(refusal(
                        "{\"requestId\":\"r\",\"prompt\":\"p\",\"metadata\":{\"k\":\"" + "v".repeat(17_000) + "\"}}"))
                .startsWith("metadata");
    }
}
