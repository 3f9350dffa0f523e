package io.imageworker.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.imageworker.config.StatusTokens;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Who a status query authenticates as, with producers taken from their topics (issue 49). */
class StatusCallersTest {

    private static final String OF_A = "a-token-0123456789abcdefghijklmnopqrstuvwxyz";
    private static final String OF_B = "b-token-0123456789abcdefghijklmnopqrstuvwxyz=";

    private final StatusCallers callers = new StatusCallers(
            true,
            StatusTokens.of(Optional.of("a=" + OF_A + ", b=" + OF_B)),
            Optional.of("X-Producer"),
            Set.of("a", "b", "c"));

    @Test
    void aTokenNamesItsProducer() {
        assertThat(callers.producer("Bearer " + OF_A, null)).contains("a");
        assertThat(callers.producer("bearer " + OF_B, null)).contains("b");
    }

    @Test
    void anythingElseIsNobody() {
        assertThat(callers.producer(null, null)).isEmpty();
        assertThat(callers.producer("Bearer " + OF_A.substring(1), null)).isEmpty();
        assertThat(callers.producer("Bearer " + OF_A + "x", null)).isEmpty();
        assertThat(callers.producer("Basic " + OF_A, null)).isEmpty();
        assertThat(callers.producer(OF_A, null)).isEmpty();
        assertThat(callers.producer("Bearer ", null)).isEmpty();
    }

    @Test
    void theIngressHeaderNamesAProducerTheWorkerReads() {
        assertThat(callers.producer(null, "c")).contains("c");
        assertThat(callers.producer("Bearer wrong", "c")).contains("c");
        assertThat(callers.producer(null, "d")).isEmpty();
        assertThat(callers.producer(null, "..")).isEmpty();
        StatusCallers tokensOnly =
                new StatusCallers(true, StatusTokens.of(Optional.of("a=" + OF_A)), Optional.empty(), Set.of("a", "c"));
        assertThat(tokensOnly.producer(null, "c")).isEmpty();
    }

    @Test
    void tokensAreLongDistinctAndNeverQuotedWhenRefused() {
        assertThatThrownBy(() -> StatusTokens.of(Optional.of("a=short-secret")))
                .hasMessageContaining("the token of a must be at least 32")
                .hasMessageNotContaining("short-secret");
        assertThatThrownBy(() -> StatusTokens.of(Optional.of("a=" + OF_A + ",b=" + OF_A)))
                .hasMessageContaining("the token of b is another producer's too")
                .hasMessageNotContaining(OF_A);
        assertThatThrownBy(() -> StatusTokens.of(Optional.of(OF_A)))
                .hasMessageContaining("entry 1 is not name=token")
                .hasMessageNotContaining(OF_A);
        assertThat(StatusTokens.of(Optional.of(" ")).tokens()).isEmpty();
    }
}
