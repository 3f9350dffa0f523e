package io.imageworker.messaging.results;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.OffsetsFixture;
import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.testing.TestConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/**
 * The one writer of a record's end once its result is sent: the results' transaction when transactions are on (it
 * tells the end before its result's {@code Uni} completes: {@code ResultTransactionsBrokerTest}), else the consumer's
 * acknowledgement, through {@link ResultSender#acknowledged}.
 */
class ResultSenderTest {

    private final OffsetsFixture offsets = new OffsetsFixture(System::nanoTime);
    private final PartitionWork work = offsets.partitions();
    private final RecordContext record = new RecordContext(null, new RecordHeaders(), "requests", 0, 0, Instant.now());

    @Test
    void withTransactionsOffTheAcknowledgementEndsTheRecord() {
        InFlight.Run run = take();

        sender(false).acknowledged(run);

        assertThat(work.runs(record)).as("ended").isFalse();
        assertThat(work.commitsIf("requests", List.of()))
                .as("acknowledged: its partition may be committed past it")
                .containsKey(new TopicPartition("requests", 0))
                .allSatisfy((partition, offset) -> assertThat(offset.offset()).isEqualTo(1));
    }

    @Test
    void withTransactionsOnTheAcknowledgementLeavesTheEndToTheTransaction() {
        InFlight.Run run = take();

        sender(true).acknowledged(run);

        assertThat(work.runs(record))
                .as("not ended a second time: its transaction tells its end")
                .isTrue();
    }

    private InFlight.Run take() {
        work.assigned(List.of(new TopicPartition("requests", 0)), Map.of());
        InFlight.Run run = offsets.inFlight().take(record);
        assertThat(run.start()).isEqualTo(PartitionWork.Start.RUN);
        return run;
    }

    private ResultSender sender(boolean transactions) {
        ResultTransactions results = new ResultTransactions(
                Map.of(),
                TestConfig.worker(Map.of("image-worker.transactions.enabled", Boolean.toString(transactions))),
                work,
                null,
                new SimpleMeterRegistry());
        return new ResultSender(null, results, null, null, null);
    }
}
