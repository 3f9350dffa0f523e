package io.imageworker.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.api.StatusCallers;
import io.imageworker.config.StatusTokens;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The console's feed, its reading of the events, and who it admits: on their own, no server. */
class ConsoleFeedTest {

    static final ObjectMapper JSON = new ObjectMapper();

    /** A completed request of {@code producer} with {@code images} images, as the reader makes it. */
    static ConsoleEntry completed(String requestId, String producer, int images) {
        StringBuilder event = new StringBuilder("{\"requestId\":\"" + requestId + "\",\"operation\":\"generate\","
                + "\"producer\":\"" + producer
                + "\",\"attempts\":1,\"billing\":{\"calls\":1,\"billed\":1,\"unknown\":0},"
                + "\"size\":{\"requested\":\"16:9\",\"sent\":\"1536x864\",\"actual\":\"1536x864\",\"matched\":true},"
                + "\"timings\":{\"receivedAt\":\"2026-01-05T10:15:20.511Z\",\"startedAt\":\"2026-01-05T10:15:20.530Z\","
                + "\"completedAt\":\"2026-01-05T10:15:42.118Z\",\"gatewayMs\":21345,\"storeMs\":83},"
                + "\"metadata\":{\"sku\":\"A-17\"},\"images\":[");
        for (int i = 0; i < images; i++) {
            event.append(i == 0 ? "" : ",")
                    .append("{\"bucket\":\"images\",\"key\":\"images/")
                    .append(requestId)
                    .append('/')
                    .append(i)
                    .append(".png\",\"uri\":\"s3://images/images/")
                    .append(requestId)
                    .append(".png\",\"url\":\"https://store.example/x?X-Amz-Signature=secret\",")
                    .append("\"contentType\":\"image/png\",\"width\":1536,\"height\":864,\"bytes\":1834211,")
                    .append("\"sha256\":\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"}");
        }
        event.append("]}");
        return ConsoleEvents.read(
                        JSON,
                        ConsoleEvents.Kind.COMPLETED,
                        event.toString().getBytes(StandardCharsets.UTF_8),
                        System.currentTimeMillis())
                .orElseThrow();
    }

    static byte[] failed(String requestId, String code, String gatewayBody) {
        return ("{\"requestId\":\"" + requestId + "\",\"operation\":\"edit\",\"error\":{\"code\":\"" + code
                        + "\",\"message\":\"the gateway refused the request\",\"retryable\":false,\"gatewayStatus\":400,"
                        + "\"gatewayBody\":" + JSON.valueToTree(gatewayBody) + "},\"attempts\":1,"
                        + "\"billing\":{\"calls\":1,\"billed\":1,\"unknown\":0},"
                        + "\"timings\":{\"receivedAt\":\"2026-01-05T10:15:58.101Z\",\"completedAt\":\"2026-01-05T10:16:03.020Z\"},"
                        + "\"metadata\":{}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aCompletedEventKeepsWhatTheConsoleShowsAndNoAddressOfTheStore() throws Exception {
        ConsoleEntry entry = completed("r-42", "catalogue", 2);

        assertThat(entry.state()).isEqualTo("completed");
        assertThat(entry.producer()).isEqualTo("catalogue");
        assertThat(entry.images()).hasSize(2);
        assertThat(entry.images().get(1).key()).isEqualTo("images/r-42/1.png");
        assertThat(entry.size().sent()).isEqualTo("1536x864");
        assertThat(entry.timings().gatewayMs()).isEqualTo(21345L);
        String shown = JSON.writeValueAsString(entry);
        assertThat(shown)
                .contains("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
                .doesNotContain("X-Amz-Signature")
                .doesNotContain("s3://")
                .doesNotContain("\"bucket\"")
                .doesNotContain("A-17");
    }

    @Test
    void aFailedEventKeepsTheGatewaysBodyCutAndACancelReadsCancelled() {
        String body = "{\"error\":{\"message\":\"" + "x".repeat(5000) + "\"}}";
        ConsoleEntry failed = ConsoleEvents.read(JSON, ConsoleEvents.Kind.FAILED, failed("r-43", "REJECTED", body), 1L)
                .orElseThrow();
        assertThat(failed.state()).isEqualTo("failed");
        assertThat(failed.error().gatewayStatus()).isEqualTo(400);
        assertThat(failed.error().gatewayBody()).startsWith("{\"error\"").hasSize(ConsoleEntry.Error.BODY_CHARS + 1);

        ConsoleEntry cancelled = ConsoleEvents.read(
                        JSON, ConsoleEvents.Kind.FAILED, failed("r-44", "CANCELLED", ""), 1L)
                .orElseThrow();
        assertThat(cancelled.state()).isEqualTo("cancelled");
    }

    @Test
    void aRecordThatIsNoEventIsNone() {
        for (String value :
                List.of("not json", "[1,2]", "null", "{}", "{\"requestId\":\"has space\"}", "{\"requestId\":42}")) {
            assertThat(ConsoleEvents.read(
                            JSON, ConsoleEvents.Kind.COMPLETED, value.getBytes(StandardCharsets.UTF_8), 1L))
                    .as(value)
                    .isEmpty();
        }
        assertThat(ConsoleEvents.read(JSON, ConsoleEvents.Kind.COMPLETED, null, 1L))
                .isEmpty();
    }

    @Test
    void anEndedRequestStaysEndedAndALaterChangeIsNumberedAfter() {
        ConsoleFeed feed = new ConsoleFeed(100, ConsoleFeed.MAX_BYTES);
        ConsoleEntry started = ConsoleEvents.read(
                        JSON,
                        ConsoleEvents.Kind.STARTED,
                        "{\"requestId\":\"r-1\",\"operation\":\"generate\",\"attempt\":1,\"queuedMs\":12}"
                                .getBytes(StandardCharsets.UTF_8),
                        1L)
                .orElseThrow();
        assertThat(feed.apply(started)).isTrue();
        assertThat(feed.find("r-1").orElseThrow().state()).isEqualTo("calling");
        long afterStart = feed.seq();

        assertThat(feed.apply(completed("r-1", "default", 1))).isTrue();
        assertThat(feed.apply(started)).as("a late image.started").isFalse();

        assertThat(feed.find("r-1").orElseThrow().state()).isEqualTo("completed");
        assertThat(feed.size()).isEqualTo(1);
        assertThat(feed.since(afterStart, 10)).extracting(ConsoleEntry::state).containsExactly("completed");
        assertThat(feed.since(feed.seq(), 10)).isEmpty();
    }

    @Test
    void theFeedKeepsTheLastChangedWithinItsEntriesAndItsBytes() {
        ConsoleFeed byEntries = new ConsoleFeed(3, ConsoleFeed.MAX_BYTES);
        for (int i = 0; i < 10; i++) {
            byEntries.apply(completed("r-" + i, i % 2 == 0 ? "even" : "odd", 1));
        }
        assertThat(byEntries.size()).isEqualTo(3);
        assertThat(byEntries.forgotten()).isEqualTo(7);
        assertThat(byEntries.latest(entry -> true, 10))
                .extracting(ConsoleEntry::requestId)
                .containsExactly("r-9", "r-8", "r-7");
        assertThat(byEntries.latest(entry -> "odd".equals(entry.producer()), 10))
                .extracting(ConsoleEntry::requestId)
                .containsExactly("r-9", "r-7");
        assertThat(byEntries.producers()).containsOnlyKeys("even", "odd");

        long one = completed("r-1000", "p", 1).bytes();
        ConsoleFeed byBytes = new ConsoleFeed(1000, one * 5);
        for (int i = 0; i < 50; i++) {
            byBytes.apply(completed("r-" + (1000 + i), "p", 1));
        }
        assertThat(byBytes.size()).isEqualTo(5);
        assertThat(byBytes.bytes()).isLessThanOrEqualTo(one * 5);
        assertThat(byBytes.find("r-1049")).isPresent();
        assertThat(byBytes.find("r-1044")).isEmpty();
    }

    @Test
    void theTokenAdmitsByHeaderOrCookieAndNothingElse() {
        ConsoleAccess open = new ConsoleAccess(Optional.empty());
        assertThat(open.guarded()).isFalse();
        assertThat(open.viewer(null, null, null)).contains(ConsoleAccess.OPERATOR);

        ConsoleAccess guarded = new ConsoleAccess(Optional.of("s3cret-token"));
        assertThat(guarded.guarded()).isTrue();
        assertThat(guarded.viewer(null, null, null)).isEmpty();
        assertThat(guarded.viewer("Bearer s3cret-token", null, null)).contains(ConsoleAccess.OPERATOR);
        assertThat(guarded.viewer("bearer s3cret-token", null, null)).contains(ConsoleAccess.OPERATOR);
        assertThat(guarded.viewer("Bearer s3cret-tokeN", null, null)).isEmpty();
        assertThat(guarded.viewer("Basic s3cret-token", null, null)).isEmpty();
        assertThat(guarded.viewer(null, "s3cret-token", null))
                .as("the token is not the cookie")
                .isEmpty();
        String cookie = guarded.cookieFor("s3cret-token").orElseThrow();
        assertThat(guarded.viewer(null, cookie, null)).contains(ConsoleAccess.OPERATOR);
        assertThat(cookie).doesNotContain("s3cret");
        assertThat(guarded.cookieFor("wrong")).isEmpty();
    }

    /** Producers a and b, each with its status token, producers taken from their topics, an ingress header. */
    static ConsoleAccess withProducers(Optional<String> operatorToken) {
        StatusTokens tokens = StatusTokens.of(Optional.of("a=" + TOKEN_A + ",b=" + TOKEN_B));
        return new ConsoleAccess(
                operatorToken, new StatusCallers(true, tokens, Optional.of("X-Producer"), Set.of("a", "b")), tokens);
    }

    static final String TOKEN_A = "a-token-0123456789abcdef0123456789abcdef";
    static final String TOKEN_B = "b-token-0123456789abcdef0123456789abcdef";

    @Test
    void aProducersCredentialAdmitsItAsItselfOnlyAndTheOperatorsTokenSeesEveryone() {
        ConsoleAccess access = withProducers(Optional.of("operator-s3cret"));
        assertThat(access.guarded()).isTrue();
        assertThat(access.viewer(null, null, null)).isEmpty();
        assertThat(access.viewer("Bearer operator-s3cret", null, null)).contains(ConsoleAccess.OPERATOR);
        assertThat(access.viewer("Bearer " + TOKEN_B, null, null)).contains(new ConsoleAccess.Viewer("b"));
        assertThat(access.viewer(null, null, "a")).contains(new ConsoleAccess.Viewer("a"));
        assertThat(access.viewer(null, null, "c"))
                .as("a name that is no producer of the worker's")
                .isEmpty();
        // The form: a producer's token gives a cookie of its own, a digest; the cookie admits that producer only.
        String cookieOfB = access.cookieFor(TOKEN_B).orElseThrow();
        assertThat(cookieOfB)
                .doesNotContain(TOKEN_B)
                .isNotEqualTo(access.cookieFor(TOKEN_A).orElseThrow());
        assertThat(access.viewer(null, cookieOfB, null)).contains(new ConsoleAccess.Viewer("b"));
        assertThat(access.viewer(null, TOKEN_B, null)).isEmpty();

        ConsoleAccess.Viewer b = new ConsoleAccess.Viewer("b");
        assertThat(b.sees(completed("r-1", "b", 1))).isTrue();
        assertThat(b.sees(completed("r-1", "a", 1))).isFalse();
        assertThat(ConsoleAccess.OPERATOR.sees(completed("r-1", "a", 1))).isTrue();

        // Without an operator's token the console still asks for a credential: a producer's, and no one is operator.
        ConsoleAccess producersOnly = withProducers(Optional.empty());
        assertThat(producersOnly.guarded()).isTrue();
        assertThat(producersOnly.viewer(null, null, null)).isEmpty();
        assertThat(producersOnly.viewer("Bearer " + TOKEN_A, null, null)).contains(new ConsoleAccess.Viewer("a"));

        // Producers declared, not authenticated: no producer is admitted by its status token.
        StatusTokens tokens = StatusTokens.of(Optional.of("a=" + TOKEN_A));
        ConsoleAccess declared = new ConsoleAccess(
                Optional.of("operator-s3cret"), new StatusCallers(false, tokens, Optional.empty(), Set.of()), tokens);
        assertThat(declared.viewer("Bearer " + TOKEN_A, null, null)).isEmpty();
        assertThat(declared.cookieFor(TOKEN_A)).isEmpty();
    }

    @Test
    void withIdsPerProducerTwoProducersRequestsOfOneIdAreTwoEntriesAndEachStreamSeesItsOwn() {
        ConsoleFeed feed = new ConsoleFeed(100, ConsoleFeed.MAX_BYTES, true);
        feed.apply(completed("r-1", "a", 1));
        feed.apply(completed("r-1", "b", 1));
        for (int i = 0; i < 10; i++) {
            feed.apply(completed("a-" + i, "a", 1));
        }
        feed.apply(completed("r-2", "b", 1));

        assertThat(feed.size()).isEqualTo(13);
        assertThat(feed.find("a", "r-1").orElseThrow().producer()).isEqualTo("a");
        assertThat(feed.find("b", "r-1").orElseThrow().producer()).isEqualTo("b");
        assertThat(feed.find("b", "a-3")).isEmpty();

        // b follows from the start, a batch at a time: a's changes are passed over, never handed out.
        ConsoleAccess.Viewer b = new ConsoleAccess.Viewer("b");
        List<String> seen = new java.util.ArrayList<>();
        long after = 0;
        while (true) {
            ConsoleFeed.Batch batch = feed.since(after, 4, b::sees);
            if (batch.last() == after) {
                break;
            }
            after = batch.last();
            batch.entries().forEach(entry -> seen.add(entry.producer() + "/" + entry.requestId()));
        }
        assertThat(seen).containsExactly("b/r-1", "b/r-2");
        assertThat(after).isEqualTo(feed.seq());
    }
}
