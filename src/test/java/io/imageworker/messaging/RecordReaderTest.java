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

    @Test
    void findsNoRequestInAnEmptyRecord() {
        assertThat(reader.read(null, null)).isInstanceOf(RecordReader.Read.Unreadable.class);
    }
}
