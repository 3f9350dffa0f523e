package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.testing.StoreProxy;
import io.imageworker.testing.StoreProxy.Exchange;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * What the store answers decides whether the worker asks again: a refusal (4xx) ends the request at once with {@code
 * STORAGE_ERROR} naming the store's answer, even with the default infrastructure patience of two minutes; a store too
 * busy (503 {@code SlowDown}) is asked again until it answers. Shares {@link HostileCorpusResource}'s worker: its
 * patience is the default, its request topic its own.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(HostileCorpusResource.class)
class StoreAnswersTest extends PipelineTestSupport {

    /** Far below the two-minute patience: an answer within it was not retried for the patience. */
    private static final Duration AT_ONCE = Duration.ofSeconds(10);

    private final StoreProxy store = StoreProxy.shared();

    @AfterEach
    void forwardEverythingAgain() {
        store.answerFor(null, 0, null);
    }

    @Test
    void aResultLookupRefusedWithAccessDeniedEndsAtOnceWithoutAGatewayCall() {
        String id = newId("denied");
        store.answerFor("/results/" + id, 403, "AccessDenied");
        Instant sent = Instant.now();

        kafka.send(HostileCorpusResource.TOPIC, request(id, ""));
        ConsumerRecord<byte[], byte[]> record = kafka.awaitResult(id, AT_ONCE);

        JsonNode error = body(record).path("error");
        assertThat(error.path("code").asText()).isEqualTo("STORAGE_ERROR");
        // The lookup is a HEAD: the store's answer has a status and no error body.
        assertThat(error.path("message").asText()).contains("403", "Forbidden");
        assertThat(Duration.between(sent, Instant.now())).isLessThan(AT_ONCE);
        assertThat(store.exchangesFor("/results/" + id))
                .extracting(Exchange::status)
                .containsExactly(403);
        assertThat(callsFor(id)).isEmpty();
    }

    @Test
    void anImageUploadRefusedEndsAtOnceAndSaysSo() {
        String id = newId("putdenied");
        store.answerFor("/images/images/" + id, 403, "AccessDenied");

        kafka.send(HostileCorpusResource.TOPIC, request(id, ""));
        ConsumerRecord<byte[], byte[]> record = kafka.awaitResult(id, AT_ONCE);

        JsonNode error = body(record).path("error");
        assertThat(error.path("code").asText()).isEqualTo("STORAGE_ERROR");
        assertThat(error.path("message").asText())
                .startsWith("the image could not be stored: ")
                .contains("403");
        assertThat(store.exchangesFor("/images/images/" + id))
                .extracting(Exchange::method, Exchange::status)
                .containsExactly(org.assertj.core.api.Assertions.tuple("PUT", 403));
        assertThat(callsFor(id)).hasSize(1);
    }

    @Test
    void aBusyStoreIsAskedAgainUntilItAnswers() {
        String id = newId("busy");
        store.answerFor("/results/" + id, 503, "SlowDown");

        kafka.send(HostileCorpusResource.TOPIC, request(id, ""));
        org.awaitility.Awaitility.await()
                .atMost(AT_ONCE)
                .until(() -> store.exchangesFor("/results/" + id).size() >= 3);
        store.answerFor(null, 0, null);

        assertThat(kafka.awaitResult(id, Duration.ofSeconds(30)).topic()).isEqualTo("image-completed");
        assertThat(store.exchangesFor("/results/" + id))
                .extracting(Exchange::status)
                .startsWith(503, 503, 503)
                .contains(404, 200);
    }

    @Test
    void theHappyPathIsThreeRoundTripsToTheStoreAndNoUploadWaitsForAContinue() {
        String id = newId("trips");

        kafka.send(HostileCorpusResource.TOPIC, request(id, ""));

        assertThat(kafka.awaitResult(id, AT_ONCE).topic()).isEqualTo("image-completed");
        // The ledger lookup (a HEAD: no record), the image, the result document; each PUT sends its body at once.
        assertThat(store.exchangesFor(id))
                .extracting(Exchange::method, Exchange::path, Exchange::status, Exchange::expect)
                .containsExactly(
                        org.assertj.core.api.Assertions.tuple("HEAD", "/images/results/" + id + ".json", 404, null),
                        org.assertj.core.api.Assertions.tuple("PUT", "/images/images/" + id + ".png", 200, null),
                        org.assertj.core.api.Assertions.tuple("PUT", "/images/results/" + id + ".json", 200, null));
    }
}
