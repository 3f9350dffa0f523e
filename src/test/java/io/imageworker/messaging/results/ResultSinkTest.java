package io.imageworker.messaging.results;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.OffsetsFixture;
import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.support.AbandonedException;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The one writer of a record's end, chosen once: with transactions on, the results' transaction tells it before its
 * result's {@code Uni} completes ({@code ResultTransactionsBrokerTest}), so the acknowledgement tells nothing more;
 * with transactions off, the acknowledgement tells it. Either way a failure ends the record unacknowledged, and the
 * record is in progress no more however it ends.
 */
class ResultSinkTest {

    private static final TopicPartition PARTITION = new TopicPartition("requests", 0);

    private final OffsetsFixture offsets = new OffsetsFixture(System::nanoTime);
    private final PartitionWork work = offsets.partitions();
    private final RecordContext record = new RecordContext(null, new RecordHeaders(), "requests", 0, 0, Instant.now());
    private final CompletableFuture<Boolean> acked = new CompletableFuture<>();
    private final AtomicReference<Throwable> nacked = new AtomicReference<>();
    private final Message<byte[]> message = Message.of(new byte[0])
            .withAck(() -> {
                acked.complete(true);
                return CompletableFuture.completedFuture(null);
            })
            .withNack(failure -> {
                nacked.set(failure);
                return CompletableFuture.completedFuture(null);
            });

    @Test
    void theSinkIsChosenOnceByWhetherTransactionsAreOn() {
        assertThat(sink(true)).isInstanceOf(TransactionalSink.class);
        assertThat(sink(false)).isInstanceOf(AcknowledgedSink.class);
        assertThat(sink(true).parker()).as("a copy committed with its offset").isPresent();
        assertThat(sink(false).parker())
                .as("no copy and commit made one: nothing parked")
                .isEmpty();
    }

    @Test
    void withTransactionsOffTheAcknowledgementEndsTheRecord() {
        InFlight.Run run = take();

        end(sink(false), run, Uni.createFrom().voidItem());

        assertThat(acked).isCompletedWithValue(true);
        assertThat(work.runs(record)).as("ended").isFalse();
        assertThat(work.commitsIf("requests", List.of()))
                .as("acknowledged: its partition may be committed past it")
                .containsEntry(PARTITION, new OffsetAndMetadata(1, ""));
        assertThat(offsets.inFlight().count()).as("in progress no more").isZero();
    }

    @Test
    void withTransactionsOnTheAcknowledgementLeavesTheEndToTheTransaction() {
        InFlight.Run run = take();

        end(sink(true), run, Uni.createFrom().voidItem());

        assertThat(acked).isCompletedWithValue(true);
        assertThat(work.runs(record))
                .as("not ended a second time: its transaction tells its end")
                .isTrue();
        assertThat(offsets.inFlight().count()).as("in progress no more").isZero();
    }

    @ParameterizedTest(name = "transactions {0}")
    @ValueSource(booleans = {true, false})
    void aFailureEndsTheRecordUnacknowledgedAndFailsTheChannel(boolean transactions) {
        InFlight.Run run = take();
        IllegalStateException failure = new IllegalStateException("Kafka refused the result");

        end(sink(transactions), run, Uni.createFrom().failure(failure));

        assertThat(nacked).as("nacked").hasValue(failure);
        assertThat(acked).isNotDone();
        assertThat(work.runs(record)).as("ended").isFalse();
        assertThat(work.commitsIf("requests", List.of()))
                .as("never committed past it")
                .containsEntry(PARTITION, new OffsetAndMetadata(0, ""));
        assertThat(offsets.inFlight().count()).isZero();
    }

    @Test
    void aRecordGivenUpIsNeitherAcknowledgedNorFailed() {
        InFlight.Run run = take();

        end(sink(true), run, Uni.createFrom().failure(AbandonedException.givenUp("r-1", "the worker drains")));

        assertThat(nacked).hasNullValue();
        assertThat(acked).isNotDone();
        assertThat(work.runs(record)).as("ended, for redelivery").isFalse();
        assertThat(work.commitsIf("requests", List.of())).containsEntry(PARTITION, new OffsetAndMetadata(0, ""));
        assertThat(offsets.inFlight().count()).isZero();
    }

    private void end(ResultSink sink, InFlight.Run run, Uni<Void> handling) {
        sink.end(message, record, run, () -> handling).await().atMost(Duration.ofSeconds(5));
    }

    private InFlight.Run take() {
        work.assigned(List.of(PARTITION), Map.of());
        InFlight.Run run = offsets.inFlight().take(record);
        assertThat(run.start()).isEqualTo(PartitionWork.Start.RUN);
        return run;
    }

    private ResultSink sink(boolean transactions) {
        return ResultTransactionsFixture.sink(
                Map.of("image-worker.transactions.enabled", Boolean.toString(transactions)), work);
    }
}
