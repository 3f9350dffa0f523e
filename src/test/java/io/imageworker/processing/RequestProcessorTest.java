package io.imageworker.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.Lane;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.pipeline.HostileCorpusResource;
import io.imageworker.testing.StoreProxy;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The story of one request told by {@link RequestProcessor} itself, called directly (no record, no Kafka): how an
 * outcome is settled. A refusal decided now is recorded, so that the same id replays it whatever its record says
 * next; an outcome decided without reading the ledger (it could not be read) is not recorded; a request whose result
 * could not be published is refused before any work, and recorded; a request past its deadline ends {@code EXPIRED}.
 * Runs in the worker of {@link HostileCorpusResource}, whose store is reached through the recording {@link
 * StoreProxy}: what was written to the store, and a store that refuses, are seen there.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(HostileCorpusResource.class)
class RequestProcessorTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final StoreProxy store = StoreProxy.shared();

    @Inject
    RequestProcessor processor;

    @AfterEach
    void forwardEverythingAgain() {
        store.answerFor(null, 0, null);
    }

    private static String newId(String what) {
        return "processor-" + what + "-" + UUID.randomUUID();
    }

    private static JsonNode json(String text) throws Exception {
        return JSON.readTree(text);
    }

    private TerminalEvent process(String requestId, JsonNode json) {
        return processor.process(requestId, json, Instant.now()).await().atMost(PATIENCE);
    }

    private static ErrorCode code(TerminalEvent event) {
        assertThat(event).isInstanceOf(TerminalEvent.Failed.class);
        return ((TerminalEvent.Failed) event).error().code();
    }

    /** Writes of the store made for the result of {@code requestId}. */
    private long resultWrites(String requestId) {
        return store.exchangesFor("/results/" + requestId).stream()
                .filter(exchange -> exchange.method().equals("PUT"))
                .count();
    }

    @Test
    void aRefusalIsRecordedAndTheSameIdReplaysItWhateverItsRecordSaysNext() throws Exception {
        String id = newId("refused");

        TerminalEvent refused = process(id, json("{\"requestId\":\"" + id + "\"}"));

        assertThat(code(refused)).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(resultWrites(id)).isEqualTo(1);
        // The same id, now a valid request: the same request, so its recorded outcome, not a new one.
        TerminalEvent again = process(id, json("{\"requestId\":\"" + id + "\",\"prompt\":\"a red bicycle\"}"));
        assertThat(again).isEqualTo(refused);
        assertThat(resultWrites(id)).isEqualTo(1);
    }

    @Test
    void aRequestWhoseLedgerCannotBeReadEndsWithoutAnyCallAndIsNotRecorded() throws Exception {
        String id = newId("unread");
        store.answerFor("/results/" + id, 403, "AccessDenied");

        TerminalEvent event = process(id, json("{\"requestId\":\"" + id + "\",\"prompt\":\"a red bicycle\"}"));

        assertThat(code(event)).isEqualTo(ErrorCode.STORAGE_ERROR);
        assertThat(resultWrites(id)).isZero();
    }

    @Test
    void aRequestWhoseResultCouldNotBePublishedIsRefusedBeforeAnyWorkAndRecorded() throws Exception {
        String id = newId("unpublishable");
        String why = "its record's key leaves no room for its result";

        TerminalEvent event = processor
                .process(
                        id,
                        json("{\"requestId\":\"" + id + "\",\"prompt\":\"a red bicycle\"}"),
                        Instant.now(),
                        Lane.NORMAL,
                        why)
                .await()
                .atMost(PATIENCE);

        assertThat(code(event)).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(((TerminalEvent.Failed) event).error().message()).contains(why);
        assertThat(resultWrites(id)).isEqualTo(1);
    }

    @Test
    void aRequestPastItsDeadlineEndsExpiredAndIsRecorded() throws Exception {
        String id = newId("expired");
        String deadline = Instant.now().minus(Duration.ofMinutes(1)).toString();

        TerminalEvent event = process(
                id,
                json("{\"requestId\":\"" + id + "\",\"prompt\":\"a red bicycle\",\"deadline\":\"" + deadline + "\"}"));

        assertThat(code(event)).isEqualTo(ErrorCode.EXPIRED);
        assertThat(resultWrites(id)).isEqualTo(1);
    }
}
