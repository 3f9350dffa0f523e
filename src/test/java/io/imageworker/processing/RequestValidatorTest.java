package io.imageworker.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.Operation;
import io.imageworker.testing.EventContract;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RequestValidatorTest {

    private final ObjectMapper mapper = new ObjectMapper();
    private final RequestValidator validator =
            RequestValidators.of(Map.of("image-worker.storage.allowed-key-prefixes", "images/,catalogue/"));

    private RequestValidator.Result validate(String json) throws Exception {
        return validator.validate(mapper.readTree(json));
    }

    private ImageRequest valid(String json) throws Exception {
        RequestValidator.Result result = validate(json);
        assertThat(result).isInstanceOf(RequestValidator.Result.Valid.class);
        return ((RequestValidator.Result.Valid) result).request();
    }

    private String refusal(String json) throws Exception {
        return invalid(json).message();
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

    private RequestValidator.Result.Invalid invalid(String json) throws Exception {
        RequestValidator.Result result = validate(json);
        assertThat(result).isInstanceOf(RequestValidator.Result.Invalid.class);
        return (RequestValidator.Result.Invalid) result;
    }

    /**
     * The validator refuses {@code json} as {@code INVALID_REQUEST} with a message that starts with {@code because},
     * and the contract's schema refuses it too.
     */
    private void assertRefusedAsTheContractDoes(String json, String because) throws Exception {
        RequestValidator.Result.Invalid invalid = invalid(json);
        assertThat(invalid.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(invalid.message()).startsWith(because);
        assertThat(EventContract.requestProblems(mapper.readTree(json))).isNotEmpty();
    }

    private static String edit(String reference) {
        return "{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"edit\",\"references\":[{\"uri\":\"s3://images/a.png\"},"
                + reference + "]}";
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "{\"uri\":\"http://cdn.example.com/a.png\"}|references[1].uri must be an s3:// or https:// address",
                "{\"uri\":\"ftp://cdn.example.com/a.png\"}|references[1].uri must be an s3:// or https:// address",
                "{\"uri\":\"file:///etc/passwd\"}|references[1].uri must be an s3:// or https:// address",
                "{\"uri\":\"HTTPS://cdn.example.com/a.png\"}|references[1].uri must be an s3:// or https:// address",
                "{\"uri\":\"s3://images/../secret/a.png\"}|references[1].uri 's3://images/../secret/a.png' has a '..'",
                "{\"uri\":\"s3://images/%2e%2e/a.png\"}|references[1].uri 's3://images/%2e%2e/a.png' has a '%'",
                "{\"uri\":\"s3://images//a.png\"}|references[1].uri 's3://images//a.png' has an empty segment",
                "{\"uri\":\"s3://images\"}|references[1].uri 's3://images' is not s3://bucket/key",
                "{\"uri\":42}|references[1].uri must be a string",
                "42|references[1] must be an object",
                "{}|references[1] must have exactly one of 'uri' and 'base64'",
                "{\"base64\":\"AAAA\"}|references[1].contentType is required with base64"
            })
    void refusesAnythingWrongWithOneImageSourceAsAnInvalidReference(String reference, String message) throws Exception {
        RequestValidator.Result.Invalid invalid = invalid(edit(reference));

        assertThat(invalid.code()).isEqualTo(ErrorCode.INVALID_REFERENCE);
        assertThat(invalid.message()).startsWith(message);
    }

    @Test
    void refusesABrokenMaskAsAnInvalidReference() throws Exception {
        RequestValidator.Result.Invalid invalid =
                invalid("{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"edit\","
                        + "\"references\":[{\"uri\":\"s3://images/a.png\"}],\"mask\":{\"uri\":\"http://h/m.png\"}}");

        assertThat(invalid.code()).isEqualTo(ErrorCode.INVALID_REFERENCE);
        assertThat(invalid.message()).startsWith("mask.uri");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"edit\"}",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"edit\",\"references\":{\"uri\":\"s3://images/a.png\"}}",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"references\":[{\"uri\":\"http://h/a.png\"}]}",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"mask\":{\"uri\":\"http://h/m.png\"}}",
                "{\"requestId\":\"r\",\"prompt\":\"p\",\"size\":\"big\",\"quality\":\"ultra\"}"
            })
    void refusesWhatIsWrongWithTheRequestAsAWholeAsAnInvalidRequest(String json) throws Exception {
        assertThat(invalid(json).code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    }

    @ParameterizedTest
    @ValueSource(strings = {"images/./x/", "images//x/", "images/x/..", "images/..x/", "/images/", "images/x\\\\y/"})
    void refusesAKeyPrefixWithSegmentsAStoreMightResolve(String prefix) throws Exception {
        RequestValidator.Result.Invalid invalid =
                invalid("{\"requestId\":\"r\",\"prompt\":\"p\",\"output\":{\"keyPrefix\":\"" + prefix + "\"}}");

        assertThat(invalid.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(invalid.message()).startsWith("output.keyPrefix");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                ".|1|",
                "..|1|",
                ".|3|",
                "..|3|",
                ".|8|,\"output\":{\"keyPrefix\":\"catalogue/\"}",
                "..|2|,\"output\":{\"keyPrefix\":\"images/\"}"
            })
    void refusesAnIdThatIsNoKeySegmentWithAnyCountAndPrefix(String id, int count, String output) throws Exception {
        RequestValidator.Result.Invalid invalid = invalid("{\"requestId\":\"" + id + "\",\"prompt\":\"p\",\"count\":"
                + count + (output == null ? "" : output) + "}");

        assertThat(invalid.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(invalid.message())
                .isEqualTo("requestId must not be '" + id + "': it becomes a segment of storage keys");
    }

    @ParameterizedTest
    @ValueSource(strings = {"...", ".a", "a.", "a..b", "..a", ":", "-"})
    void acceptsIdsOfDotsThatAreNamesInAPath(String id) throws Exception {
        for (int count : new int[] {1, 3}) {
            assertThat(valid("{\"requestId\":\"" + id + "\",\"prompt\":\"p\",\"count\":" + count + "}")
                            .requestId())
                    .isEqualTo(id);
        }
    }

    @Test
    void refusesARequestWhoseResultKeyTheStoreMustNotBeSent() throws Exception {
        // A result prefix the store's key check refuses: every key it makes is refused, before any call.
        RequestValidator doubled = RequestValidators.of(Map.of("image-worker.storage.result-prefix", "results//"));

        RequestValidator.Result result = doubled.validate(mapper.readTree("{\"requestId\":\"r-1\",\"prompt\":\"p\"}"));

        assertThat(result).isInstanceOfSatisfying(RequestValidator.Result.Invalid.class, invalid -> {
            assertThat(invalid.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
            assertThat(invalid.message()).contains("'results//r-1.json' has an empty segment");
        });
    }

    @Test
    void acceptsAKeyPrefixOfPlainSegmentsWithOrWithoutATrailingSlash() throws Exception {
        assertThat(valid("{\"requestId\":\"r\",\"prompt\":\"p\",\"output\":{\"keyPrefix\":\"images/a.b/c\"}}")
                        .keyPrefix())
                .isEqualTo("images/a.b/c");
    }

    @Test
    void repeatsAtMostSixtyFourCharactersOfAProducersValue() throws Exception {
        String operation = "x".repeat(100_000);

        String message = refusal("{\"requestId\":\"r\",\"prompt\":\"p\",\"operation\":\"" + operation + "\"}");

        assertThat(message).startsWith("operation must be 'generate' or 'edit', not '" + "x".repeat(64) + "...'");
        assertThat(message.length()).isLessThan(200);
    }

    @Test
    void echoesOnlyMetadataAndAnOperationThatFollowTheContract() throws Exception {
        assertThat(RequestValidator.echoableMetadata(mapper.readTree("{\"metadata\":{\"sku\":\"A-17\"}}")))
                .containsExactly(Map.entry("sku", "A-17"));
        assertThat(RequestValidator.echoableMetadata(mapper.readTree("{\"metadata\":{\"n\":{\"deep\":1}}}")))
                .isEmpty();
        assertThat(RequestValidator.echoableMetadata(
                        mapper.readTree("{\"metadata\":{\"k\":\"" + "v".repeat(17_000) + "\"}}")))
                .isEmpty();
        assertThat(RequestValidator.echoableOperation(mapper.readTree("{\"operation\":\"edit\"}")))
                .isEqualTo("edit");
        assertThat(RequestValidator.echoableOperation(mapper.readTree("{}"))).isEqualTo("generate");
        assertThat(RequestValidator.echoableOperation(mapper.readTree("{\"operation\":\"" + "x".repeat(1_000) + "\"}")))
                .isNull();
        assertThat(RequestValidator.echoableOperation(mapper.readTree("{\"operation\":42}")))
                .isNull();
    }

    @ParameterizedTest(name = "count {0} is {1}")
    @CsvSource(
            delimiter = '|',
            value = {"|1", "1|1", "4|4", "8|8", "4.0|4"})
    void acceptsACountFromOneToEightAndTakesNoneAsOne(String count, int variants) throws Exception {
        String json = "{\"requestId\":\"r\",\"prompt\":\"p\"" + (count == null ? "" : ",\"count\":" + count) + "}";

        assertThat(valid(json).count()).isEqualTo(variants);
        assertThat(EventContract.requestProblems(mapper.readTree(json))).isEmpty();
    }

    @ParameterizedTest(name = "count {0}")
    @ValueSource(strings = {"0", "9", "-1", "2.5", "\"2\"", "true", "[2]", "{}", "1e10", "99999999999999999999"})
    void refusesACountThatIsNotAnIntegerFromOneToEightAsTheContractDoes(String count) throws Exception {
        String json = "{\"requestId\":\"r\",\"prompt\":\"p\",\"count\":" + count + "}";

        assertRefusedAsTheContractDoes(json, "count must be an integer from 1 to 8");
    }

    @ParameterizedTest(name = "producer {0} is {1}")
    @CsvSource(
            delimiter = '|',
            value = {"|default", "\"catalogue\"|catalogue", "\"a.B_9-z\"|a.B_9-z"})
    void acceptsAProducerOfTheRuleAndTakesNoneAsTheDefault(String producer, String name) throws Exception {
        String json =
                "{\"requestId\":\"r\",\"prompt\":\"p\"" + (producer == null ? "" : ",\"producer\":" + producer) + "}";

        assertThat(valid(json).producerName()).isEqualTo(name);
        assertThat(valid(json).producer()).isEqualTo(name.equals("default") ? null : name);
        assertThat(EventContract.requestProblems(mapper.readTree(json))).isEmpty();
    }

    @ParameterizedTest(name = "producer {0}")
    @ValueSource(strings = {"\"\"", "\"team a\"", "\"a/b\"", "\"caf\u00e9\"", "7", "[\"a\"]", "{}"})
    void refusesAProducerThatBreaksTheRuleWithNoCallAndEchoesNone(String producer) throws Exception {
        String json = "{\"requestId\":\"r\",\"prompt\":\"p\",\"producer\":" + producer + "}";

        assertRefusedAsTheContractDoes(json, "producer must be");
        assertThat(RequestValidator.echoableProducer(mapper.readTree(json))).isNull();
    }

    @Test
    void refusesAProducerOfSixtyFiveCharacters() throws Exception {
        assertThat(valid("{\"requestId\":\"r\",\"prompt\":\"p\",\"producer\":\"" + "p".repeat(64) + "\"}")
                        .producer())
                .hasSize(64);
        assertThat(refusal("{\"requestId\":\"r\",\"prompt\":\"p\",\"producer\":\"" + "p".repeat(65) + "\"}"))
                .startsWith("producer must be");
    }

    /**
     * With producers taken from their topics a key is {@code <keyPrefix><producer>/...}: a prefix that would let one
     * producer's key be another's is refused (issue 49).
     */
    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                // images/a + b/ is images/ab/, producer ab's.
                "images/a | must end with '/'",
                // images/a/ + b/ + 1.png is images/a/b/1.png, the first variant of a's request b.
                "images/a/ | must not hold a producer's name",
                "images/x/ab/y/ | must not hold a producer's name",
            })
    void refusesAKeyPrefixThatCouldMakeOneProducersKeyAnothers(String prefix, String why) throws Exception {
        RequestValidator perProducer = RequestValidators.of(Map.of(
                "image-worker.producer-identity", "topic",
                "image-worker.producers", "a,b,ab"));
        String json = "{\"requestId\":\"1\",\"prompt\":\"p\",\"producer\":\"b\",\"output\":{\"keyPrefix\":\"" + prefix
                + "\"}}";

        RequestValidator.Result result = perProducer.validate(mapper.readTree(json));

        assertThat(result).isInstanceOf(RequestValidator.Result.Invalid.class);
        assertThat(((RequestValidator.Result.Invalid) result).message())
                .startsWith("output.keyPrefix")
                .contains(why);
        // Declared producers' keys hold no producer: the same prefixes are theirs to use.
        assertThat(RequestValidators.of(Map.of()).validate(mapper.readTree(json)))
                .isInstanceOf(RequestValidator.Result.Valid.class);
        // A prefix ending with '/' and naming no producer is one.
        String plain = json.replace(prefix, "images/catalogue-2026/");
        assertThat(perProducer.validate(mapper.readTree(plain))).isInstanceOf(RequestValidator.Result.Valid.class);
    }
}
