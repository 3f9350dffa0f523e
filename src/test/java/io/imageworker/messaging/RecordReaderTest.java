package io.imageworker.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RecordReaderTest {

    private final RecordReader reader = new RecordReader(new ObjectMapper());

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void readsPlainJson() {
        RecordReader.Read read = reader.read(bytes("{\"requestId\":\"r-1\",\"prompt\":\"p\"}"), new RecordHeaders());

        assertThat(read).isInstanceOf(RecordReader.Read.Request.class);
        assertThat(((RecordReader.Read.Request) read).requestId()).isEqualTo("r-1");
    }

    @Test
    void readsACloudEventInBinaryMode() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("ce_specversion", bytes("1.0"));
        headers.add("ce_type", bytes("image.request"));
        headers.add("content-type", bytes("application/json"));

        RecordReader.Read read = reader.read(bytes("{\"requestId\":\"r-2\",\"prompt\":\"p\"}"), headers);

        assertThat(((RecordReader.Read.Request) read).requestId()).isEqualTo("r-2");
    }

    @Test
    void unwrapsACloudEventInStructuredMode() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("content-type", bytes("application/cloudevents+json; charset=utf-8"));

        RecordReader.Read read = reader.read(
                bytes("{\"specversion\":\"1.0\",\"id\":\"1\",\"data\":{\"requestId\":\"r-3\",\"prompt\":\"p\"}}"),
                headers);

        assertThat(((RecordReader.Read.Request) read).json().path("prompt").asText())
                .isEqualTo("p");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "not json",
                "[1,2]",
                "\"text\"",
                "{\"prompt\":\"no id\"}",
                "{\"requestId\":42}",
                "{\"requestId\":\"  \"}"
            })
    void findsNoRequestInWhatIsNotOne(String value) {
        assertThat(reader.read(bytes(value), new RecordHeaders())).isInstanceOf(RecordReader.Read.Unreadable.class);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"requestId\":\"../../etc/passwd\",\"prompt\":\"x\"}",
                "{\"requestId\":\"a/b\",\"prompt\":\"x\"}",
                "{\"requestId\":\"a b\",\"prompt\":\"x\"}",
                "{\"requestId\":\" r-1\",\"prompt\":\"x\"}",
                "{\"requestId\":\"\",\"prompt\":\"x\"}",
                "{\"requestId\":\"caf\u00e9\",\"prompt\":\"x\"}",
                "{\"requestId\":\"r\\u0000\",\"prompt\":\"x\"}",
                "{\"requestId\":\"r%2e%2e\",\"prompt\":\"x\"}"
            })
    void findsNoRequestWhenTheIdBreaksTheContractsRuleAndSaysWhyWithoutRepeatingIt(String value) {
        RecordReader.Read read = reader.read(bytes(value), new RecordHeaders());

        assertThat(read).isInstanceOf(RecordReader.Read.Unreadable.class);
        assertThat(((RecordReader.Read.Unreadable) read).reason())
                .startsWith("requestId breaks the contract's rule: 1 to 128 characters of [A-Za-z0-9._:-]")
                .doesNotContain("passwd", "/", "%");
    }

    @Test
    void takesAnIdOfExactly128CharactersAndRefusesOneOf129() {
        String longest = "a".repeat(128);

        RecordReader.Read read = reader.read(bytes("{\"requestId\":\"" + longest + "\"}"), new RecordHeaders());
        RecordReader.Read tooLong = reader.read(bytes("{\"requestId\":\"" + longest + "b\"}"), new RecordHeaders());

        assertThat(read).isInstanceOf(RecordReader.Read.Request.class);
        assertThat(((RecordReader.Read.Request) read).requestId()).isEqualTo(longest);
        assertThat(tooLong).isInstanceOf(RecordReader.Read.Unreadable.class);
        assertThat(((RecordReader.Read.Unreadable) tooLong).reason()).endsWith("(129 characters given)");
    }

    @Test
    void namesAnIdThatIsNoString() {
        assertThat(reader.read(bytes("{\"requestId\":[\"r-1\"]}"), new RecordHeaders()))
                .isEqualTo(new RecordReader.Read.Unreadable("requestId is not a string"));
        assertThat(reader.read(bytes("{\"requestId\":null}"), new RecordHeaders()))
                .isEqualTo(new RecordReader.Read.Unreadable("no requestId"));
    }

    @Test
    void findsNoRequestInDeepNestingAndKeepsTheReasonShort() {
        String deep = "{\"requestId\":\"r\",\"x\":" + "[".repeat(50_000) + "]".repeat(50_000) + "}";

        RecordReader.Read read = reader.read(bytes(deep), new RecordHeaders());

        assertThat(read).isInstanceOf(RecordReader.Read.Unreadable.class);
        assertThat(((RecordReader.Read.Unreadable) read).reason())
                .startsWith("value is not JSON: ")
                .hasSizeLessThanOrEqualTo("value is not JSON: ".length() + RecordReader.MAX_DETAIL + 3);
    }

    @Test
    void findsNoRequestInAnEmptyRecord() {
        assertThat(reader.read(null, null)).isInstanceOf(RecordReader.Read.Unreadable.class);
    }
}
