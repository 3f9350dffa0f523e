package io.imageworker.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.reference.ReferenceRefusedException;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.model.S3Exception;

class PatienceTest {

    @Test
    void takesNoAnswerAndABusyOrBrokenServerAsTransient() {
        assertThat(Patience.isTransient(
                        SdkClientException.create("Unable to execute HTTP request: connection refused")))
                .isTrue();
        assertThat(Patience.isTransient(new io.smallrye.mutiny.TimeoutException()))
                .isTrue();
        assertThat(Patience.isTransient(new java.util.concurrent.TimeoutException()))
                .isTrue();
        assertThat(Patience.isTransient(new CompletionException(new ConnectException("refused"))))
                .isTrue();
        assertThat(Patience.isTransient(new org.apache.kafka.common.errors.TimeoutException("expired")))
                .isTrue();
        for (int status : new int[] {500, 502, 503, 408, 429}) {
            assertThat(Patience.isTransient(s3Error(status)))
                    .as("status %d", status)
                    .isTrue();
        }
    }

    @Test
    void takesAnAnswerAboutTheRequestAndADefectAsFinal() {
        for (int status : new int[] {400, 401, 403, 404, 409, 412}) {
            assertThat(Patience.isTransient(s3Error(status)))
                    .as("status %d", status)
                    .isFalse();
        }
        assertThat(Patience.isTransient(new CompletionException(s3Error(403)))).isFalse();
        assertThat(Patience.isTransient(new RecordTooLargeException("too large")))
                .isFalse();
        assertThat(Patience.isTransient(new ReferenceRefusedException("references[0]: x")))
                .isFalse();
        assertThat(Patience.isTransient(new IllegalStateException("a defect"))).isFalse();
    }

    @ParameterizedTest
    @ValueSource(ints = {400, 403})
    void endsAtOnceOnAFinalFailureAndGivesItToTheCaller(int status) {
        AtomicInteger attempts = new AtomicInteger();
        Uni<String> operation = Uni.createFrom().item(() -> {
            attempts.incrementAndGet();
            throw s3Error(status);
        });

        Throwable failure = withPatience(Duration.ofMinutes(2), operation)
                .awaitFailure(Duration.ofSeconds(2))
                .getFailure();

        assertThat(failure).isInstanceOf(S3Exception.class);
        assertThat(((S3Exception) failure).statusCode()).isEqualTo(status);
        assertThat(attempts).hasValue(1);
    }

    @Test
    void retriesATransientFailureUntilItHeals() {
        AtomicInteger attempts = new AtomicInteger();
        Uni<String> operation = Uni.createFrom().item(() -> {
            if (attempts.incrementAndGet() < 3) {
                throw s3Error(503);
            }
            return "stored";
        });

        String result = withPatience(Duration.ofSeconds(30), operation)
                .awaitItem(Duration.ofSeconds(10))
                .getItem();

        assertThat(result).isEqualTo("stored");
        assertThat(attempts).hasValue(3);
    }

    @Test
    void givesTheLastTransientFailureWhenPatienceEnds() {
        Throwable failure = withPatience(
                        Duration.ofMillis(700), Uni.createFrom().<String>failure(() -> s3Error(503)))
                .awaitFailure(Duration.ofSeconds(10))
                .getFailure();

        assertThat(failure).isInstanceOf(S3Exception.class);
        assertThat(((S3Exception) failure).statusCode()).isEqualTo(503);
    }

    private static S3Exception s3Error(int status) {
        return (S3Exception) S3Exception.builder()
                .statusCode(status)
                .message("status " + status)
                .build();
    }

    /** {@code operation} retried with {@code patience} (backoffs from 200 ms to 10 s), subscribed to. */
    private static <T> UniAssertSubscriber<T> withPatience(Duration patience, Uni<T> operation) {
        return new Patience(patience, Duration.ofMillis(200), Duration.ofSeconds(10))
                .retry(operation)
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create());
    }
}
