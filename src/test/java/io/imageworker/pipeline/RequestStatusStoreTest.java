package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.testing.StoreProxy;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code GET /requests/{requestId}} when the store does not answer as it should: a store that cannot be read is a 503
 * with a body saying so, never a 500 with a stack trace; a malformed id is refused before anything is asked of the
 * store. Shares {@link HostileCorpusResource}'s worker, whose store is reached through the recording proxy.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(HostileCorpusResource.class)
class RequestStatusStoreTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final StoreProxy store = StoreProxy.shared();

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TestHTTPResource("/requests/")
    URI requests;

    @AfterEach
    void forwardEverythingAgain() {
        store.answerFor(null, 0, null);
    }

    private HttpResponse<String> get(String requestId) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(requests.resolve(requestId)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A store too busy, or one that refuses the read: either way the status cannot be known now. */
    @ParameterizedTest
    @CsvSource({"503, SlowDown", "403, AccessDenied"})
    void aStoreThatCannotBeReadIsA503SayingSo(int storeStatus, String storeCode) throws Exception {
        String id = "status-" + storeCode + "-" + UUID.randomUUID();
        store.answerFor("/results/" + id, storeStatus, storeCode);

        HttpResponse<String> response = get(id);

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.headers().firstValue("retry-after")).isPresent();
        JsonNode body = JSON.readTree(response.body());
        assertThat(body.path("error").asText()).isEqualTo("STORE_UNAVAILABLE");
        assertThat(body.path("message").asText()).contains("cannot be read");
        assertThat(response.body()).doesNotContain("Exception", "\tat ");
        assertThat(store.exchangesFor("/results/" + id)).isNotEmpty();
    }

    @Test
    void aMalformedIdAsksNothingOfTheStore() throws Exception {
        String marker = "status-malformed-" + UUID.randomUUID();

        HttpResponse<String> response = get(marker + "!");

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(store.exchangesFor(marker)).isEmpty();
    }

    @Test
    void anIdWithNoRecordReadsUnknownThroughTheProxy() throws Exception {
        String id = "status-none-" + UUID.randomUUID();

        HttpResponse<String> response = get(id);

        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(response.body()).path("status").asText()).isEqualTo("unknown");
        assertThat(store.exchangesFor("/results/" + id)).isNotEmpty();
    }
}
