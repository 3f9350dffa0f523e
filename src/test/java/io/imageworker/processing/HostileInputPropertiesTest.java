package io.imageworker.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.ImageSource;
import io.imageworker.contract.Operation;
import io.imageworker.contract.RequestId;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.image.SizeDecision;
import io.imageworker.image.SizePolicy;
import io.imageworker.messaging.RecordReader;
import io.imageworker.storage.ObjectAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Whatever a producer sends, the record reader and the validator bring it to one of three ends: a request, an
 * unreadable record (DLQ, with a reason), or a typed refusal ({@code INVALID_REQUEST}, {@code INVALID_REFERENCE}) whose
 * message names the field and stays short. Never an exception, never a hang, and nothing accepted that a storage key
 * or a reference read could be built from unsafely. The inputs are arbitrary bytes, arbitrary strings, arbitrary JSON
 * trees, and objects shaped like requests whose every field may be valid, hostile or any JSON at all.
 *
 * <p>(Named {@code *Test} so that the build's one test suffix picks it up.)
 */
class HostileInputPropertiesTest {

    private static final int TRIES = 1000;
    /** Far more than any one input needs (microseconds); a hang or a blow-up ends the property instead of the build. */
    private static final Duration IN_TIME = Duration.ofSeconds(5);
    /**
     * The threads the timed steps run in, kept between steps: JUnit's {@code assertTimeoutPreemptively} starts a thread
     * for each, up to five a try, which took most of the class's time. A step that hangs keeps its thread; the next
     * one gets another.
     */
    private static final ExecutorService TIMED = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "hostile-input-step");
        thread.setDaemon(true);
        return thread;
    });

    private static final List<String> ALLOWED_PREFIXES = List.of("images/", "catalogue/");
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final ObjectMapper mapper = new ObjectMapper().findAndRegisterModules();
    private final RecordReader reader = new RecordReader(mapper);
    private final RequestValidator validator = RequestValidators.of(
            Map.of("image-worker.storage.allowed-key-prefixes", String.join(",", ALLOWED_PREFIXES)));

    @Property(tries = TRIES)
    void everyByteArrayIsARequestOrUnreadable(@ForAll("bytes") byte[] value) {
        endsWell(value, new RecordHeaders());
    }

    @Property(tries = TRIES)
    void everyStringIsARequestOrUnreadable(@ForAll("strings") String value) {
        endsWell(value.getBytes(StandardCharsets.UTF_8), new RecordHeaders());
    }

    @Property(tries = TRIES)
    void everyJsonTreeIsARequestAnUnreadableRecordOrATypedRefusal(@ForAll("trees") JsonNode tree) throws Exception {
        endsWell(mapper.writeValueAsBytes(tree), new RecordHeaders());
    }

    // No generic edge cases: those of ten fields combined would crowd out the requests that go deep. The hostile
    // values that matter are in the fields' own pools.
    @Property(tries = TRIES, edgeCases = EdgeCasesMode.NONE)
    void everyRequestShapedObjectIsARequestAnUnreadableRecordOrATypedRefusal(
            @ForAll("requestShaped") ObjectNode request, @ForAll boolean structuredCloudEvent) throws Exception {
        RecordHeaders headers = new RecordHeaders();
        JsonNode value = request;
        if (structuredCloudEvent) {
            headers.add("content-type", "application/cloudevents+json".getBytes(StandardCharsets.UTF_8));
            value = NODES.objectNode().put("specversion", "1.0").put("id", "1").set("data", request);
        }
        endsWell(mapper.writeValueAsBytes(value), headers);
        // The inputs reach every end, deep ones included, or the property would prove little.
        Statistics.coverage(coverage -> {
            // About 4, 70, 6 and 20 % in practice: the bounds leave room for chance.
            coverage.check("request").percentage(p -> p >= 1);
            coverage.check(ErrorCode.INVALID_REQUEST.name()).percentage(p -> p >= 20);
            coverage.check(ErrorCode.INVALID_REFERENCE.name()).percentage(p -> p >= 1);
            coverage.check("unreadable").percentage(p -> p >= 5);
        });
    }

    @Property(tries = TRIES)
    void everyAcceptedObjectAddressIsOnePlainKeyInOneBucket(@ForAll("objectAddresses") String uri) {
        Optional<ObjectAddress> address = inTime(() -> {
            try {
                return Optional.of(ObjectAddress.parse(uri));
            } catch (IllegalArgumentException refused) {
                assertThat(refused.getMessage()).isNotBlank();
                return Optional.empty();
            }
        });
        address.ifPresent(accepted -> {
            assertThat(accepted).hasToString(uri);
            assertPlainKey(accepted.key());
        });
    }

    /** {@code step}'s value, or a failure if it takes longer than {@link #IN_TIME} (then it is interrupted). */
    private static <T> T inTime(Callable<T> step) {
        Future<T> running = TIMED.submit(step);
        try {
            return running.get(IN_TIME.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException late) {
            running.cancel(true);
            throw new AssertionError("a step took longer than " + IN_TIME, late);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", interrupted);
        } catch (ExecutionException failed) {
            if (failed.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (failed.getCause() instanceof Error error) {
                throw error;
            }
            throw new AssertionError(failed.getCause());
        }
    }

    /** The one thing every input must do: end as a request, an unreadable record or a typed refusal, in time. */
    private void endsWell(byte[] value, RecordHeaders headers) {
        RecordReader.Read read = inTime(() -> reader.read(value, headers));
        assertThat(read).isNotNull();
        if (read instanceof RecordReader.Read.Unreadable unreadable) {
            Statistics.collect("unreadable");
            // The reason goes into a header: present, one line, short.
            assertThat(unreadable.reason()).isNotBlank().doesNotContain("\n").hasSizeLessThan(300);
            return;
        }
        RecordReader.Read.Request request = (RecordReader.Read.Request) read;
        assertThat(RequestId.isValid(request.requestId())).isTrue();
        assertThat(request.json().isObject()).isTrue();
        RequestValidator.Result result = inTime(() -> validator.validate(request.json()));
        if (result instanceof RequestValidator.Result.Invalid invalid) {
            Statistics.collect(invalid.code().name());
            assertThat(invalid.code()).isIn(ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REFERENCE);
            // The message travels back in an event: it names the field and never repeats a large value.
            assertThat(invalid.message()).isNotBlank().hasSizeLessThan(400);
            return;
        }
        Statistics.collect("request");
        ImageRequest accepted = ((RequestValidator.Result.Valid) result).request();
        assertAcceptedIsSafe(accepted, request.requestId());
    }

    /** What a request that passed may be trusted with: storage keys, reads of references, a size, an event. */
    private void assertAcceptedIsSafe(ImageRequest request, String readId) {
        assertThat(request.requestId()).isEqualTo(readId);
        // 1 to 32,000 characters after trimming, with nothing left to trim.
        assertThat(request.prompt()).isNotEmpty().hasSizeLessThanOrEqualTo(RequestValidator.MAX_PROMPT);
        assertThat(List.of(
                        request.prompt().charAt(0),
                        request.prompt().charAt(request.prompt().length() - 1)))
                .noneMatch(c -> Character.isWhitespace(c) || Character.isSpaceChar(c) || Character.isISOControl(c));
        assertThat(ALLOWED_PREFIXES).anyMatch(request.keyPrefix()::startsWith);
        // Every key built from the request is a plain key: prefix, id, extension.
        assertPlainKey(request.keyPrefix() + request.requestId() + ".png");
        if (request.operation() == Operation.EDIT) {
            assertThat(request.references()).hasSizeBetween(1, RequestValidator.MAX_REFERENCES);
        } else {
            assertThat(request.references()).isEmpty();
            assertThat(request.mask()).isNull();
        }
        List<ImageSource> sources = new ArrayList<>(request.references());
        if (request.mask() != null) {
            sources.add(request.mask());
        }
        for (ImageSource source : sources) {
            assertThat(source.uri() == null).isNotEqualTo(source.base64() == null);
            if (source.base64() != null) {
                assertThat(source.contentType()).isNotNull();
            } else if (source.uri().startsWith(ObjectAddress.SCHEME)) {
                assertPlainKey(ObjectAddress.parse(source.uri()).key());
            } else {
                assertThat(source.uri()).startsWith("https://");
            }
        }
        assertThat(mapper.valueToTree(request.metadata()).toString().getBytes(StandardCharsets.UTF_8))
                .hasSizeLessThanOrEqualTo(RequestValidator.MAX_METADATA_BYTES);
        // Sizes are decided later, from any string: a decision, never an exception.
        SizeDecision decision = inTime(() -> SizePolicy.forGenerate(request.size()));
        assertThat(decision).isNotNull();
        // And whatever the request holds, its event can be written (lone surrogates included).
        TerminalEvent.Failed event = new TerminalEvent.Failed(
                request.requestId(),
                request.operation().wireName(),
                new TerminalEvent.Error(ErrorCode.REJECTED, request.prompt(), false, null, null),
                null,
                null,
                0,
                io.imageworker.contract.Billing.NONE,
                new TerminalEvent.Timings(Instant.EPOCH, Instant.EPOCH, Instant.EPOCH, null, null),
                request.metadata(),
                request.producer());
        inTime(() -> mapper.writeValueAsBytes(event));
    }

    private static void assertPlainKey(String key) {
        assertThat(ObjectAddress.keyRefusal(key)).as("refusal of key %s", key).isEmpty();
        assertThat(key.split("/", -1)).doesNotContain("", ".", "..");
        assertThat(key).doesNotContain("\\", "%");
    }

    // ---- inputs ----

    @Provide
    Arbitrary<byte[]> bytes() {
        Arbitrary<byte[]> any = Arbitraries.bytes().array(byte[].class).ofMaxSize(2_000);
        // Bytes that start like JSON, so that the parser goes deeper before it meets the garbage.
        Arbitrary<byte[]> jsonish = Combinators.combine(
                        Arbitraries.of("{\"requestId\":\"", "{\"requestId\":\"r-1\",\"prompt\":\"", "[", "{", "\"", ""),
                        Arbitraries.bytes().array(byte[].class).ofMaxSize(200))
                .as((start, rest) -> concat(start.getBytes(StandardCharsets.UTF_8), rest));
        return Arbitraries.oneOf(any, jsonish, Arbitraries.of(new byte[0], new byte[] {(byte) 0xEF, (byte) 0xBB}));
    }

    @Provide
    Arbitrary<String> strings() {
        return Arbitraries.oneOf(
                // Every UTF-16 unit, lone surrogates included.
                Arbitraries.strings().withCharRange('\u0000', '\uffff').ofMaxLength(300),
                // The characters JSON is made of, so that many strings are almost JSON.
                Arbitraries.strings()
                        .withChars("{}[]\":,\\ \t\nrequestIdpmt01-.eE+nultrfas/")
                        .ofMaxLength(300));
    }

    @Provide
    Arbitrary<JsonNode> trees() {
        return tree(4);
    }

    /** Any JSON value, nested at most {@code depth} deep. */
    private static Arbitrary<JsonNode> tree(int depth) {
        Arbitrary<JsonNode> leaf = Arbitraries.oneOf(
                Arbitraries.just(NODES.nullNode()),
                Arbitraries.of(true, false).map(b -> (JsonNode) NODES.booleanNode(b)),
                Arbitraries.integers().map(i -> (JsonNode) NODES.numberNode(i.intValue())),
                Arbitraries.longs().map(l -> (JsonNode) NODES.numberNode(l.longValue())),
                Arbitraries.doubles().map(d -> (JsonNode) NODES.numberNode(d.doubleValue())),
                Arbitraries.bigIntegers()
                        .between(java.math.BigInteger.TEN.pow(40).negate(), java.math.BigInteger.TEN.pow(40))
                        .map(b -> (JsonNode) NODES.numberNode(b)),
                hostileText().map(t -> (JsonNode) NODES.textNode(t)));
        if (depth == 0) {
            return leaf;
        }
        Arbitrary<JsonNode> deeper = Arbitraries.lazy(() -> tree(depth - 1));
        Arbitrary<JsonNode> array = deeper.list().ofMaxSize(4).map(HostileInputPropertiesTest::array);
        Arbitrary<JsonNode> object = Arbitraries.maps(fieldNames(), deeper)
                .ofMaxSize(4)
                .map(fields -> {
                    ObjectNode node = NODES.objectNode();
                    fields.forEach(node::set);
                    return node;
                });
        return Arbitraries.frequencyOf(Tuple.of(3, leaf), Tuple.of(2, array), Tuple.of(3, object));
    }

    /** Names of the contract, and any others. */
    private static Arbitrary<String> fieldNames() {
        return Arbitraries.oneOf(
                Arbitraries.of(
                        "requestId",
                        "operation",
                        "prompt",
                        "size",
                        "quality",
                        "references",
                        "mask",
                        "output",
                        "keyPrefix",
                        "deadline",
                        "metadata",
                        "uri",
                        "base64",
                        "contentType",
                        "specversion",
                        "data"),
                hostileText());
    }

    /** Short strings from every corner: control characters, lone surrogates, paths, escapes, long runs. */
    private static Arbitrary<String> hostileText() {
        return Arbitraries.oneOf(
                Arbitraries.strings().withCharRange('\u0000', '\uffff').ofMaxLength(20),
                Arbitraries.strings()
                        .withChars("./\\%:_-aZ09 \u0000\ud800\udc00\u202e")
                        .ofMaxLength(20),
                Arbitraries.of("", " ", "..", "../../etc/passwd", "%2e%2e", "a".repeat(129), "x".repeat(40_000)));
    }

    @Provide
    Arbitrary<ObjectNode> requestShaped() {
        List<Arbitrary<Optional<Map.Entry<String, JsonNode>>>> fields = List.of(
                field("requestId", 95, requestIds()),
                field(
                        "operation",
                        70,
                        Arbitraries.frequencyOf(
                                Tuple.of(6, text(Arbitraries.of("edit"))),
                                Tuple.of(3, text(Arbitraries.of("generate"))),
                                Tuple.of(1, anything()))),
                field("prompt", 90, text(prompts())),
                field("size", 50, text(sizes())),
                field("quality", 30, text(Arbitraries.of("high", "medium", "low", "ultra", ""))),
                field("references", 60, Arbitraries.oneOf(sourceArrays(), anything())),
                field("mask", 20, Arbitraries.oneOf(source(), anything())),
                field("output", 40, Arbitraries.oneOf(output(), anything())),
                field("deadline", 20, text(deadlines())),
                field("metadata", 40, Arbitraries.oneOf(metadata(), anything())));
        return Combinators.combine(fields).as(entries -> {
            ObjectNode node = NODES.objectNode();
            entries.forEach(entry -> entry.ifPresent(e -> node.set(e.getKey(), e.getValue())));
            return node;
        });
    }

    @Provide
    Arbitrary<String> objectAddresses() {
        return addresses();
    }

    private static Arbitrary<String> addresses() {
        Arbitrary<String> keys = Arbitraries.oneOf(
                Arbitraries.strings().withChars("./\\%aZ09 -").ofMaxLength(30),
                Arbitraries.strings().withCharRange('\u0000', '\uffff').ofMaxLength(30),
                Arbitraries.of("..", "a/../b", "./a", "a//b", "%2e%2e/x", "a\\..\\b", "k".repeat(1_100)));
        return Combinators.combine(Arbitraries.of("images", "other", "", "bad!bucket", "images/"), keys)
                .as((bucket, key) -> "s3://" + bucket + "/" + key);
    }

    /** A field present {@code percent} of the time. */
    private static Arbitrary<Optional<Map.Entry<String, JsonNode>>> field(
            String name, int percent, Arbitrary<JsonNode> value) {
        return Arbitraries.frequencyOf(
                Tuple.of(percent, value.map(v -> Optional.of(Map.entry(name, v)))),
                Tuple.of(100 - percent, Arbitraries.just(Optional.empty())));
    }

    private static Arbitrary<JsonNode> anything() {
        return tree(2);
    }

    private static Arbitrary<JsonNode> text(Arbitrary<String> values) {
        return values.map(value -> (JsonNode) NODES.textNode(value));
    }

    private static Arbitrary<JsonNode> requestIds() {
        Arbitrary<String> valid =
                Arbitraries.strings().withChars("AZaz09._:-").ofMinLength(1).ofMaxLength(RequestId.MAX_LENGTH);
        return Arbitraries.frequencyOf(
                Tuple.of(8, text(valid)), Tuple.of(1, text(hostileText())), Tuple.of(1, anything()));
    }

    private static Arbitrary<String> prompts() {
        return Arbitraries.oneOf(
                Arbitraries.strings().withCharRange('\u0000', '\uffff').ofMaxLength(50),
                Arbitraries.of(
                        "a red bicycle", "   ", "", " p ".repeat(11_000), "p".repeat(32_001), "p".repeat(32_000)));
    }

    private static Arbitrary<String> sizes() {
        return Arbitraries.oneOf(
                Arbitraries.of("1024x1024", "16:9", "auto", "big", "0x0", "-5x10", "16:0", "99999999999x1", "1x1:1"),
                Arbitraries.strings().withChars("0123456789x:- auto").ofMaxLength(20),
                hostileText());
    }

    private static Arbitrary<String> deadlines() {
        return Arbitraries.oneOf(
                Arbitraries.of(
                        "2030-01-01T00:00:00Z", "2000-01-01T00:00:00Z", "tomorrow", "+999999999-12-31T23:59:59Z"),
                hostileText());
    }

    private static Arbitrary<String> uris() {
        return Arbitraries.oneOf(
                Arbitraries.of(
                        "s3://images/a.png",
                        "s3://images/refs/b.jpg",
                        "s3://images/../secret/a.png",
                        "s3://images/%2e%2e/a.png",
                        "s3://images//a.png",
                        "s3://other/a.png",
                        "s3://images",
                        "s3://",
                        "https://cdn.example.com/a.png",
                        "https://169.254.169.254/latest/meta-data/",
                        "https://[::ffff:127.0.0.1]/a.png",
                        "https://0x7f000001/a.png",
                        "https://user@cdn.example.com@127.0.0.1/a.png",
                        "http://cdn.example.com/a.png",
                        "file:///etc/passwd",
                        "gopher://127.0.0.1:6379/_PING",
                        "HTTPS://cdn.example.com/a.png"),
                addresses(),
                hostileText().map(text -> "https://" + text));
    }

    private static Arbitrary<JsonNode> source() {
        Arbitrary<JsonNode> byUri = text(uris()).map(uri -> NODES.objectNode().set("uri", uri));
        Arbitrary<JsonNode> inline = Combinators.combine(
                        Arbitraries.oneOf(Arbitraries.of("iVBORw0KGgo=", "!!!not base64!!!", ""), hostileText()),
                        Arbitraries.of(Optional.of("image/png"), Optional.of("text/html"), Optional.<String>empty()))
                .as((base64, type) -> {
                    ObjectNode node = NODES.objectNode().put("base64", base64);
                    type.ifPresent(t -> node.put("contentType", t));
                    return node;
                });
        Arbitrary<JsonNode> both = Arbitraries.just(
                NODES.objectNode().put("uri", "s3://images/a.png").put("base64", "AAAA"));
        return Arbitraries.frequencyOf(
                Tuple.of(6, byUri), Tuple.of(3, inline), Tuple.of(1, both), Tuple.of(1, anything()));
    }

    private static Arbitrary<JsonNode> sourceArrays() {
        return source().list().ofMaxSize(18).map(HostileInputPropertiesTest::array);
    }

    private static Arbitrary<JsonNode> output() {
        Arbitrary<String> prefixes = Arbitraries.oneOf(
                Arbitraries.of(
                        "images/",
                        "catalogue/2026/",
                        "images/a.b/c",
                        "secret/",
                        "../",
                        "images/../secret/",
                        "images/./x/",
                        "images//x/",
                        "/images/",
                        ""),
                Arbitraries.strings()
                        .withChars("imagescatlou/._-%\\")
                        .ofMaxLength(30)
                        .map(tail -> "images/" + tail));
        return text(prefixes).map(prefix -> NODES.objectNode().set("keyPrefix", prefix));
    }

    private static Arbitrary<JsonNode> metadata() {
        Arbitrary<JsonNode> strings = Arbitraries.maps(hostileText(), hostileText())
                .ofMaxSize(5)
                .map(entries -> {
                    ObjectNode node = NODES.objectNode();
                    entries.forEach(node::put);
                    return node;
                });
        Arbitrary<JsonNode> large = Arbitraries.integers()
                .between(16_000, 17_000)
                .map(length -> NODES.objectNode().put("k", "v".repeat(length)));
        return Arbitraries.oneOf(strings, large);
    }

    private static JsonNode array(List<JsonNode> items) {
        ArrayNode node = NODES.arrayNode();
        items.forEach(node::add);
        return node;
    }

    private static byte[] concat(byte[] first, byte[] second) {
        byte[] both = new byte[first.length + second.length];
        System.arraycopy(first, 0, both, 0, first.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        return both;
    }
}
