package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.contract.ErrorCode;
import io.imageworker.testing.KafkaOffsets;
import io.imageworker.testing.KafkaTestClient;
import io.imageworker.testing.StoreProxy;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A hostile corpus, sent as an independent producer would, over a request topic of six partitions: bad sizes, bad
 * operations, oversized prompts and metadata, disguised and internal reference addresses, escapes in {@code s3://}
 * keys, garbage base64, arrays, numbers, {@code null}, a tombstone, invalid UTF-8, 50,000-deep nesting, requestIds
 * that are too long, not strings, or hold slashes and dots, keys and headers that leave no room for an answer at the
 * producer's and the broker's real 1 MiB limits. Every record is answered once, at once, with the right
 * code: its {@code image-failed} event, or its byte-exact DLQ copy with the reason in the headers; no gateway call;
 * no store request for a record whose id breaks the contract, and no store answer that blames the request; and every
 * partition's committed offset reaches its end within seconds, not after minutes of retries.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(HostileCorpusResource.class)
class HostileCorpusTest extends PipelineTestSupport {

    /** The whole corpus answered; the worker retries nothing here, so seconds are enough and minutes fail. */
    private static final Duration ANSWERED_WITHIN = Duration.ofSeconds(60);
    /** The throttled commit runs every 5 s. */
    private static final Duration COMMITTED_WITHIN = Duration.ofSeconds(20);

    private final String run = "hc-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<Hostile> corpus = new ArrayList<>();

    @Test
    void answersEveryHostileRecordOnceAtOnceAndMovesEveryPartitionToItsEnd() throws Exception {
        buildCorpus();
        StoreProxy store = StoreProxy.shared();
        Instant start = Instant.now();
        Map<Hostile, RecordMetadata> sent = new HashMap<>();
        for (int i = 0; i < corpus.size(); i++) {
            Hostile record = corpus.get(i);
            sent.put(
                    record,
                    kafka.send(new ProducerRecord<>(
                            HostileCorpusResource.TOPIC,
                            i % HostileCorpusResource.PARTITIONS,
                            record.key,
                            record.value,
                            record.headers)));
        }

        await("every hostile record answered")
                .atMost(ANSWERED_WITHIN)
                .pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(corpus.stream()
                                .filter(record ->
                                        answers(record, sent.get(record)).isEmpty())
                                .map(record -> record.kind))
                        .as("records not answered")
                        .isEmpty());
        Duration answered = Duration.between(start, Instant.now());
        Map<TopicPartition, Long> ends = KafkaOffsets.endOffsets(kafka.kafka(), HostileCorpusResource.TOPIC);
        await("every partition committed to its end")
                .atMost(COMMITTED_WITHIN)
                .pollInterval(Duration.ofMillis(250))
                .until(() -> KafkaOffsets.committedUpTo(kafka.kafka(), HostileCorpusResource.GROUP, ends));
        assertThat(ends).hasSize(HostileCorpusResource.PARTITIONS);
        assertThat(ends.values()).allMatch(end -> end > 0);
        System.out.printf(
                "HostileCorpusTest: %d records (%d events, %d DLQ copies) answered in %d ms, every partition committed"
                        + " to its end in %d ms%n",
                corpus.size(),
                corpus.stream().filter(record -> record.code != null).count(),
                corpus.stream().filter(record -> record.code == null).count(),
                answered.toMillis(),
                Duration.between(start, Instant.now()).toMillis());

        for (Hostile record : corpus) {
            List<ConsumerRecord<byte[], byte[]>> answers = answers(record, sent.get(record));
            assertThat(answers).as("answers to %s", record.kind).hasSize(1);
            ConsumerRecord<byte[], byte[]> answer = answers.get(0);
            if (record.code != null) {
                assertThat(answer.topic()).as(record.kind).isEqualTo("image-failed");
                assertThat(body(answer).path("error").path("code").asText())
                        .as("%s: %s", record.kind, body(answer).path("error").path("message"))
                        .isEqualTo(record.code.name());
                assertThat(body(answer).path("billing").toString())
                        .as(record.kind)
                        .isEqualTo("{\"calls\":0,\"billed\":0,\"unknown\":0}");
                assertThat(answer.key())
                        .as(record.kind)
                        .isEqualTo(
                                record.answerKey != null
                                        ? record.answerKey
                                        : record.key != null ? record.key : bytes(record.requestId));
                record.check.accept(answer);
                // Whatever was sent, a refusal stays small: it echoes only metadata that follows the contract.
                assertThat(answer.value().length).as(record.kind).isLessThan(20 * 1024);
            } else if (record.fitted) {
                // Too large to copy whole with the DLQ headers: the copy says so, and keeps all it can.
                assertThat(KafkaTestClient.header(answer, "dead-letter-reason"))
                        .as(record.kind)
                        .contains("the whole copy is larger than Kafka takes");
                record.check.accept(answer);
            } else {
                assertThat(answer.value()).as(record.kind).isEqualTo(record.value);
                assertThat(answer.key()).as(record.kind).isEqualTo(record.key);
                assertThat(KafkaTestClient.header(answer, "dead-letter-reason"))
                        .as(record.kind)
                        .isNotBlank();
                for (Header header : record.headers) {
                    assertThat(answer.headers().lastHeader(header.key()).value())
                            .as("%s: header %s", record.kind, header.key())
                            .isEqualTo(header.value());
                }
            }
        }
        assertThat(gateway.imageCalls()).as("gateway calls").isEmpty();
        // No store request for an id that breaks the rule, and every request the corpus caused is one the store
        // could answer: a result lookup of a valid id, or the one missing reference.
        assertThat(store.exchangesFor("passwd")).isEmpty();
        Set<String> expectedPaths = corpus.stream()
                .filter(record -> record.code != null)
                .map(record -> "/images/results/" + record.requestId + ".json")
                .collect(Collectors.toSet());
        expectedPaths.add("/images/refs/" + run + "-missing.png");
        assertThat(store.exchangesFor(run)).allSatisfy(exchange -> {
            assertThat(expectedPaths).contains(exchange.path());
            assertThat(exchange.status()).isIn(200, 404);
        });
    }

    /** The events of a record with a usable id, or the DLQ copies of a record without one. */
    private static List<ConsumerRecord<byte[], byte[]>> answers(Hostile record, RecordMetadata sent) {
        if (record.code != null) {
            return kafka.results(record.requestId);
        }
        return kafka.deadLetters().stream()
                .filter(copy -> HostileCorpusResource.TOPIC.equals(KafkaTestClient.header(copy, "dead-letter-topic")))
                .filter(copy ->
                        String.valueOf(sent.partition()).equals(KafkaTestClient.header(copy, "dead-letter-partition")))
                .filter(copy ->
                        String.valueOf(sent.offset()).equals(KafkaTestClient.header(copy, "dead-letter-offset")))
                .toList();
    }

    // ---- the corpus ----

    private void buildCorpus() {
        // Sizes, operations, prompts, quality.
        refused("size that is a word", ErrorCode.INVALID_REQUEST, "\"size\":\"big\"");
        refused("size of zero", ErrorCode.INVALID_REQUEST, "\"size\":\"0x0\"");
        refused("negative size", ErrorCode.INVALID_REQUEST, "\"size\":\"-5x10\"");
        refused("ratio with a zero", ErrorCode.INVALID_REQUEST, "\"size\":\"16:0\"");
        refused("size that is a number", ErrorCode.INVALID_REQUEST, "\"size\":1024");
        refused("unknown operation", ErrorCode.INVALID_REQUEST, "\"operation\":\"upscale\"");
        refused("operation that is a number", ErrorCode.INVALID_REQUEST, "\"operation\":42");
        refused(
                "operation of 300,000 characters",
                ErrorCode.INVALID_REQUEST,
                "\"operation\":\"" + "x".repeat(300_000) + "\"");
        refusedWhole("no prompt", ErrorCode.INVALID_REQUEST, "{\"requestId\":\"ID\"}");
        refusedWhole(
                "prompt of spaces and control characters",
                ErrorCode.INVALID_REQUEST,
                "{\"requestId\":\"ID\",\"prompt\":\" \\u0000\\t\\u00a0\\u0001 \"}");
        refusedWhole(
                "prompt over 32,000 characters",
                ErrorCode.INVALID_REQUEST,
                "{\"requestId\":\"ID\",\"prompt\":\"" + "p".repeat(32_001) + "\"}");
        refusedWhole("prompt that is an array", ErrorCode.INVALID_REQUEST, "{\"requestId\":\"ID\",\"prompt\":[\"a\"]}");
        refused("unknown quality", ErrorCode.INVALID_REQUEST, "\"quality\":\"ultra\"");
        // Metadata.
        refused(
                "metadata over 16 KiB",
                ErrorCode.INVALID_REQUEST,
                "\"metadata\":{\"k\":\"" + "v".repeat(17_000) + "\"}");
        refused("metadata with a number", ErrorCode.INVALID_REQUEST, "\"metadata\":{\"n\":1}");
        refused("metadata that is an array", ErrorCode.INVALID_REQUEST, "\"metadata\":[\"a\"]");
        refused(
                "metadata of 750 KB of nested quotes",
                ErrorCode.INVALID_REQUEST,
                "\"metadata\":" + nestedQuotes(750_000));
        // The shape of an edit.
        refused(
                "references on a generate",
                ErrorCode.INVALID_REQUEST,
                "\"references\":[{\"uri\":\"s3://images/a.png\"}]");
        refused("edit without references", ErrorCode.INVALID_REQUEST, "\"operation\":\"edit\"");
        refused(
                "edit with 17 references",
                ErrorCode.INVALID_REQUEST,
                "\"operation\":\"edit\",\"references\":["
                        + String.join(",", java.util.Collections.nCopies(17, "{\"uri\":\"s3://images/a.png\"}")) + "]");
        refused("mask on a generate", ErrorCode.INVALID_REQUEST, "\"mask\":{\"uri\":\"s3://images/m.png\"}");
        // Where the image would be stored.
        refused(
                "key prefix climbing out",
                ErrorCode.INVALID_REQUEST,
                "\"output\":{\"keyPrefix\":\"images/../secret/\"}");
        refused("key prefix not allowed", ErrorCode.INVALID_REQUEST, "\"output\":{\"keyPrefix\":\"secret/\"}");
        refused(
                "key prefix with a dot segment",
                ErrorCode.INVALID_REQUEST,
                "\"output\":{\"keyPrefix\":\"images/./x/\"}");
        refused("output that is a string", ErrorCode.INVALID_REQUEST, "\"output\":\"images/\"");
        // Deadlines.
        refused("deadline that is a word", ErrorCode.INVALID_REQUEST, "\"deadline\":\"tomorrow\"");
        refused("deadline passed", ErrorCode.EXPIRED, "\"deadline\":\"2000-01-01T00:00:00Z\"");
        // References: sources not allowed, escapes, internal and disguised addresses, garbage.
        reference("plain http reference", "{\"uri\":\"http://cdn.example.com/a.png\"}");
        reference("ftp reference", "{\"uri\":\"ftp://cdn.example.com/a.png\"}");
        reference("file reference", "{\"uri\":\"file:///etc/passwd\"}");
        reference("s3 key climbing out of the bucket", "{\"uri\":\"s3://images/../secret/a.png\"}");
        reference("s3 key with percent-escaped dots", "{\"uri\":\"s3://images/%2e%2e/secret/a.png\"}");
        reference("s3 key with an empty segment", "{\"uri\":\"s3://images//a.png\"}");
        reference("s3 key with backslashes", "{\"uri\":\"s3://images/a\\\\..\\\\b.png\"}");
        reference("s3 bucket not allowed", "{\"uri\":\"s3://other-bucket/a.png\"}");
        reference("s3 object missing", "{\"uri\":\"s3://images/refs/" + run + "-missing.png\"}");
        reference("cloud metadata address", "{\"uri\":\"https://169.254.169.254/latest/meta-data/iam/\"}");
        reference("loopback address", "{\"uri\":\"https://127.0.0.1/a.png\"}");
        reference("loopback in IPv4-mapped IPv6", "{\"uri\":\"https://[::ffff:127.0.0.1]/a.png\"}");
        reference("loopback as hex", "{\"uri\":\"https://0x7f000001/a.png\"}");
        reference("loopback as a decimal", "{\"uri\":\"https://2130706433/a.png\"}");
        reference("user information before loopback", "{\"uri\":\"https://user@localhost/a.png\"}");
        reference("loopback name with a trailing dot", "{\"uri\":\"https://localhost./a.png\"}");
        reference("metadata host name", "{\"uri\":\"https://metadata.google.internal/computeMetadata/v1/\"}");
        reference("host not on the list", "{\"uri\":\"https://cdn.example.com/a.png\"}");
        reference("garbage base64", "{\"base64\":\"!!!not base64!!!\",\"contentType\":\"image/png\"}");
        reference(
                "base64 of text",
                "{\"base64\":\""
                        + Base64.getEncoder().encodeToString(bytes("<html>not an image</html>"))
                        + "\",\"contentType\":\"image/png\"}");
        reference("base64 without a content type", "{\"base64\":\"iVBORw0KGgo=\"}");
        reference("reference that is a number", "42");
        reference("empty reference", "{}");
        refused(
                "plain http mask",
                ErrorCode.INVALID_REFERENCE,
                "\"operation\":\"edit\",\"references\":[{\"uri\":\"s3://images/refs/" + run
                        + "-missing.png\"}],\"mask\":{\"uri\":\"http://cdn.example.com/m.png\"}");
        refusedWhole(
                "binary CloudEvent without a prompt",
                ErrorCode.INVALID_REQUEST,
                "{\"requestId\":\"ID\"}",
                "ce_specversion",
                "1.0",
                "ce_type",
                "image.request");
        // Not a request at all.
        unreadable("array", bytes("[1,2]"));
        unreadable("number", bytes("42"));
        unreadable("null", bytes("null"));
        unreadable("string", bytes("\"text\""));
        unreadable("tombstone", null);
        unreadable("empty value", new byte[0]);
        unreadable("not JSON", bytes("hello"));
        unreadable("truncated JSON", bytes("{\"requestId\":\"" + run + "-t\""));
        unreadable(
                "invalid UTF-8",
                concat(
                        bytes("{\"requestId\":\"" + run + "-u\",\"prompt\":\""),
                        new byte[] {(byte) 0xC3, (byte) 0x28, (byte) 0xFF},
                        bytes("\"}")));
        unreadable(
                "50,000-deep nesting",
                bytes("{\"requestId\":\"" + run + "-n\",\"prompt\":" + "[".repeat(50_000) + "]".repeat(50_000) + "}"));
        unreadable("no requestId", bytes("{\"prompt\":\"a red bicycle\"}"));
        unreadable("requestId of 129 characters", request("\"" + run + "-" + "a".repeat(128 - run.length()) + "\""));
        unreadable("requestId of 5,000 characters", request("\"" + "a".repeat(5_000) + "\""));
        unreadable("requestId that is a number", request("42"));
        unreadable("requestId that is an array", request("[\"" + run + "-a\"]"));
        unreadable("requestId that is null", request("null"));
        unreadable("requestId climbing out", request("\"../../etc/passwd\""));
        unreadable("requestId with a slash", request("\"" + run + "-a/b\""));
        unreadable("requestId with percent escapes", request("\"" + run + "-..%2f..%2f\""));
        unreadable("empty requestId", request("\"\""));
        unreadable("requestId with spaces", request("\" " + run + "-s \""));
        unreadable("requestId with an accent", request("\"" + run + "-caf\u00e9\""));
        unreadable("requestId with a NUL", request("\"" + run + "-\\u0000\""));
        unreadable("structured CloudEvent whose data is text", bytes("{\"specversion\":\"1.0\",\"data\":\"x\"}"));
        byte[] garbage = new byte[1_000];
        new Random(11).nextBytes(garbage);
        unreadable("random bytes", garbage);
        byte[] large = new byte[900_000];
        Arrays.fill(large, (byte) 'x');
        unreadable("900 KB that are not JSON", large);
        // As large as a producer may send (1 MiB with the record's overhead): its copy with the DLQ headers is not.
        byte[] largest = new byte[1_048_400];
        Arrays.fill(largest, (byte) 'y');
        unreadable("the largest record a producer may send, not JSON", largest);
        fitted(answer -> {
            assertThat(largest).startsWith(answer.value());
            assertThat(answer.value().length).isLessThan(largest.length);
            assertThat(KafkaTestClient.header(answer, "dead-letter-value-bytes"))
                    .isEqualTo(String.valueOf(largest.length));
            assertThat(KafkaTestClient.header(answer, "dead-letter-reason")).contains("the value is cut");
        });
        // Keys and headers as large as a producer may send: the request fits, its answer with them would not.
        unreadable("not JSON, with a key of 1,048,400 bytes", bytes("hello"));
        byte[] hugeKey = filled(1_048_400, 'k');
        corpus.get(corpus.size() - 1).key = hugeKey;
        fitted(answer -> {
            assertThat(answer.value()).isEqualTo(bytes("hello"));
            assertThat(answer.key()).isEqualTo(Arrays.copyOf(hugeKey, 1024));
            assertThat(KafkaTestClient.header(answer, "dead-letter-key-bytes")).isEqualTo("1048400");
            assertThat(KafkaTestClient.header(answer, "origin")).isNotNull();
        });
        unreadable("not JSON, with a header of 1,048,300 bytes", bytes("hello"));
        corpus.get(corpus.size() - 1).headers.add(new RecordHeader("huge", filled(1_048_300, 'h')));
        fitted(answer -> {
            assertThat(answer.value()).isEqualTo(bytes("hello"));
            assertThat(answer.headers().lastHeader("huge")).isNull();
            assertThat(KafkaTestClient.header(answer, "dead-letter-dropped-headers"))
                    .isEqualTo("huge");
            assertThat(KafkaTestClient.header(answer, "origin")).isNotNull();
        });
        refusedWhole(
                "request with a key of 1,047,800 bytes",
                ErrorCode.INVALID_REQUEST,
                "{\"requestId\":\"ID\",\"prompt\":\"a\"}");
        Hostile keyed = corpus.get(corpus.size() - 1);
        keyed.key = filled(1_047_800, 'k');
        keyed.answerKey = bytes(keyed.requestId);
        fitted(answer -> assertThat(body(answer).path("error").path("message").asText())
                .contains("this event is keyed by its requestId, not by the record's key (1047800 bytes)"));
        refusedWhole(
                "request with a tracestate of 1,040,000 bytes",
                ErrorCode.INVALID_REQUEST,
                "{\"requestId\":\"ID\",\"prompt\":\"a\"}",
                "traceparent",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "tracestate",
                "v=" + "t".repeat(1_039_998));
        Hostile traced = corpus.get(corpus.size() - 1);
        traced.fitted = true;
        traced.check = answer -> {
            assertThat(answer.key()).isEqualTo(traced.key);
            assertThat(answer.headers().lastHeader("tracestate")).isNull();
            assertThat(KafkaTestClient.header(answer, "traceparent")).contains("0af7651916cd43dd8448eb211c80319c");
            assertThat(body(answer).path("error").path("message").asText())
                    .contains("this event goes without the record's tracestate header (1040000 bytes)");
        };
    }

    /**
     * A request whose key leaves no room for its answer (it fits as a request, not as its result, at the producer's
     * and the broker's real 1 MiB limits) is refused before any gateway call, its answer keyed by its requestId; the
     * next request on its partition is answered, and the partition committed to its end.
     */
    @Test
    void aRequestWhoseKeyLeavesNoRoomForItsAnswerIsRefusedAndItsPartitionMovesOn() {
        String refused = run + "-huge-key";
        String next = run + "-next";
        TopicPartition partition = new TopicPartition(HostileCorpusResource.TOPIC, 0);
        kafka.send(new ProducerRecord<>(
                partition.topic(), partition.partition(), filled(1_047_800, 'k'), bytes(request(refused, ""))));
        kafka.send(new ProducerRecord<>(
                partition.topic(), partition.partition(), bytes("k-" + next), bytes(request(next, ""))));

        ConsumerRecord<byte[], byte[]> answer = result(refused);
        assertThat(answer.topic()).isEqualTo("image-failed");
        assertThat(answer.key()).isEqualTo(bytes(refused));
        assertThat(body(answer).path("error").path("code").asText()).isEqualTo("INVALID_REQUEST");
        assertThat(body(answer).path("error").path("message").asText())
                .contains("this event is keyed by its requestId, not by the record's key (1047800 bytes)");
        assertThat(body(answer).path("billing").path("calls").asInt()).isZero();
        assertThat(result(next).topic()).isEqualTo("image-completed");
        assertThat(callsFor(refused)).isEmpty();
        assertThat(callsFor(next)).hasSize(1);
        long end = KafkaOffsets.endOffsets(kafka.kafka(), partition.topic()).get(partition);
        await("the partition committed to its end")
                .atMost(COMMITTED_WITHIN)
                .pollInterval(Duration.ofMillis(250))
                .until(() ->
                        KafkaOffsets.committedUpTo(kafka.kafka(), HostileCorpusResource.GROUP, Map.of(partition, end)));
    }

    /** The last record's answer is fitted to Kafka's limit, and passes {@code check}. */
    private void fitted(java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> check) {
        Hostile last = corpus.get(corpus.size() - 1);
        last.fitted = true;
        last.check = check;
    }

    private static byte[] filled(int length, char with) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte) with);
        return bytes;
    }

    /** A request with a fresh valid id and a prompt, plus {@code fields}, refused with {@code code}. */
    private void refused(String kind, ErrorCode code, String fields) {
        refusedWhole(kind, code, "{\"requestId\":\"ID\",\"prompt\":\"a red bicycle\"," + fields + "}");
    }

    /** A whole request whose {@code ID} is replaced by a fresh valid id, refused with {@code code}. */
    private void refusedWhole(String kind, ErrorCode code, String json, String... headers) {
        String id = run + "-" + corpus.size();
        corpus.add(new Hostile(
                kind, bytes("k-" + id), bytes(json.replace("\"ID\"", "\"" + id + "\"")), id, code, headers));
    }

    /** An edit whose second reference is {@code source}: an {@code INVALID_REFERENCE}. */
    private void reference(String kind, String source) {
        refused(
                kind,
                ErrorCode.INVALID_REFERENCE,
                "\"operation\":\"edit\",\"references\":[{\"base64\":\""
                        + Base64.getEncoder().encodeToString(png()) + "\",\"contentType\":\"image/png\"}," + source
                        + "]");
    }

    /** A record that is no request: a byte-exact DLQ copy. Without a key, as many producers send. */
    private void unreadable(String kind, byte[] value) {
        corpus.add(new Hostile(kind, null, value, null, null, "origin", "hostile-corpus " + corpus.size()));
    }

    private static byte[] request(String requestId) {
        return bytes("{\"requestId\":" + requestId + ",\"prompt\":\"a red bicycle\"}");
    }

    /** An object nested three deep whose serialized form is mostly quotes, about {@code size} bytes. */
    private static String nestedQuotes(int size) {
        StringBuilder json = new StringBuilder("{\"k\":{\"l\":{");
        for (int i = 0; json.length() < size; i++) {
            json.append(i == 0 ? "" : ",").append("\"a").append(i).append("\":\"\\\"\"");
        }
        return json.append("}}}").toString();
    }

    private static byte[] png() {
        return io.imageworker.testing.images.TestImages.png(16, 16);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        int length = Arrays.stream(parts).mapToInt(part -> part.length).sum();
        byte[] all = new byte[length];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, all, at, part.length);
            at += part.length;
        }
        return all;
    }

    /**
     * One record of the corpus.
     *
     * @param requestId its valid id, or null when it has none (a DLQ copy is expected)
     * @param code the code of its {@code image-failed}, or null when a DLQ copy is expected
     */
    private static final class Hostile {
        final String kind;
        byte[] key;
        final byte[] value;
        final String requestId;
        final ErrorCode code;
        final List<Header> headers = new ArrayList<>();
        /**
         * Whether its answer is fitted to Kafka's limit: a DLQ copy cut (the record is too large to copy whole with
         * the DLQ headers), an event keyed by its requestId (its key leaves no room for it) or without its trace.
         */
        boolean fitted;

        /** The key of its event when it is not the record's (or the requestId when the record has none). */
        byte[] answerKey;

        /** What its answer must also be. */
        java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> check = answer -> {};

        Hostile(String kind, byte[] key, byte[] value, String requestId, ErrorCode code, String... headerPairs) {
            this.kind = kind;
            this.key = key;
            this.value = value;
            this.requestId = requestId;
            this.code = code;
            for (int i = 0; i < headerPairs.length; i += 2) {
                headers.add(new RecordHeader(headerPairs[i], bytes(headerPairs[i + 1])));
            }
        }
    }
}
