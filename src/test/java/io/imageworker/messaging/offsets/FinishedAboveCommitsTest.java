package io.imageworker.messaging.offsets;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.messaging.offsets.PartitionWork.Start;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Every commit SmallRye's throttled strategy makes carries what was finished above it, not only the hand-off's: an
 * owner killed before it hands a partition off leaves its next owner the requests it finished out of order and those it
 * inherited and had not seen again. (What Kafka does with the metadata is the broker's; here, what is sent to it.)
 */
class FinishedAboveCommitsTest {

    private static final TopicPartition P0 = new TopicPartition("requests", 0);
    private static final TopicPartition P1 = new TopicPartition("requests", 1);

    private final PartitionWork work = new PartitionWork();
    private final List<Map<TopicPartition, OffsetAndMetadata>> sent = new ArrayList<>();
    private final FinishedAboveCommits<String, String> commits =
            new FinishedAboveCommits<>(recording(), work, new ConsumerCommits());

    @SuppressWarnings("unchecked")
    private KafkaConsumer<String, String> recording() {
        return (KafkaConsumer<String, String>) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {KafkaConsumer.class}, (proxy, method, args) -> {
                    if (method.getName().startsWith("commit")) {
                        sent.add((Map<TopicPartition, OffsetAndMetadata>) args[0]);
                        return Uni.createFrom().voidItem();
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private final TakenRecords taken = new TakenRecords();

    /** The copy of the record at this offset the worker took (one per test: the same record taken once). */
    private RecordCopy record(TopicPartition partition, long offset) {
        return taken.record(partition, offset);
    }

    @Test
    void aPeriodicCommitNamesTheRequestsFinishedAboveIt() {
        for (long offset = 10; offset <= 13; offset++) {
            assertThat(work.started(record(P0, offset))).isEqualTo(Start.RUN);
        }
        work.ended(record(P0, 10), true);
        work.ended(record(P0, 12), true);
        work.ended(record(P0, 13), true);

        // What the throttled strategy commits: 11 is still running.
        commits.commit(Map.of(P0, new OffsetAndMetadata(11))).await().indefinitely();
        commits.commitAsync(Map.of(P0, new OffsetAndMetadata(11))).await().indefinitely();

        assertThat(sent).hasSize(2).allSatisfy(commit -> assertThat(commit)
                .isEqualTo(Map.of(P0, new OffsetAndMetadata(11, "iw1:1-2"))));
    }

    @Test
    void anInheritedFinishedRecordIsPassedOnUntilTheCommitPassesIt() {
        // The last owner committed 20 and had finished 22 and 24 above it.
        work.assigned(List.of(P1), Map.of(P1, new OffsetAndMetadata(20, "iw1:2,4")));

        // Killed before it saw either again: its first commit passes both on.
        commits.commit(Map.of(P1, new OffsetAndMetadata(20))).await().indefinitely();
        assertThat(sent.get(0)).isEqualTo(Map.of(P1, new OffsetAndMetadata(20, "iw1:2,4")));

        // 20 runs, 21 and 22 are taken (22 acknowledged as done before), 21 ends.
        assertThat(work.started(record(P1, 20))).isEqualTo(Start.RUN);
        assertThat(work.started(record(P1, 21))).isEqualTo(Start.RUN);
        assertThat(work.started(record(P1, 22))).isEqualTo(Start.DONE);
        work.ended(record(P1, 21), true);
        commits.commit(Map.of(P1, new OffsetAndMetadata(20))).await().indefinitely();
        assertThat(sent.get(1)).isEqualTo(Map.of(P1, new OffsetAndMetadata(20, "iw1:1-2,4")));

        // Once the commit is past everything, nothing is left to name.
        work.ended(record(P1, 20), true);
        commits.commit(Map.of(P1, new OffsetAndMetadata(23))).await().indefinitely();
        assertThat(sent.get(2)).isEqualTo(Map.of(P1, new OffsetAndMetadata(23, "iw1:1")));
    }

    @Test
    void aPartitionThisWorkerDoesNotHoldIsCommittedWithoutMetadataAndOwnMetadataIsKept() {
        commits.commit(Map.of(P0, new OffsetAndMetadata(5), P1, new OffsetAndMetadata(7, "own")))
                .await()
                .indefinitely();

        assertThat(sent.get(0))
                .isEqualTo(Map.of(P0, new OffsetAndMetadata(5, ""), P1, new OffsetAndMetadata(7, "own")));
    }
}
