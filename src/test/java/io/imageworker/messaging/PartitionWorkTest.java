package io.imageworker.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class PartitionWorkTest {

    private static final TopicPartition P0 = new TopicPartition("requests", 0);
    private static final TopicPartition P1 = new TopicPartition("requests", 1);

    private final PartitionWork work = new PartitionWork();

    private static RecordContext record(TopicPartition partition, long offset) {
        return new RecordContext(null, null, partition.topic(), partition.partition(), offset, Instant.now());
    }

    private void start(TopicPartition partition, long... offsets) {
        for (long offset : offsets) {
            assertThat(work.started(record(partition, offset))).isTrue();
        }
    }

    @Test
    void commitsUpToTheFirstRequestNotAcknowledged() throws Exception {
        start(P0, 10, 11, 12, 13);
        work.ended(record(P0, 10), true);
        work.ended(record(P0, 12), true);
        work.ended(record(P0, 13), true);

        PartitionWork.Release release = work.release(List.of(P0), Duration.ZERO);

        // 11 is still running: never committed past it, whatever finished after it.
        assertThat(release.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(11)));
        assertThat(release.givenUp()).isEqualTo(1);
    }

    @Test
    void commitsPastEverythingWhenAllIsAcknowledgedAndNeverPastARecordThatWasNot() throws Exception {
        start(P0, 5, 6);
        start(P1, 7, 8);
        work.ended(record(P0, 5), true);
        work.ended(record(P0, 6), true);
        work.ended(record(P1, 7), false);
        work.ended(record(P1, 8), true);

        PartitionWork.Release release = work.release(List.of(P0, P1), Duration.ZERO);

        assertThat(release.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(7), P1, new OffsetAndMetadata(7)));
        assertThat(release.givenUp()).isZero();
    }

    @Test
    void waitsForTheRequestsOnTheRevokedPartitionsOnlyAndCommitsWhatTheyAcknowledge() throws Exception {
        start(P0, 1, 2);
        start(P1, 3);
        CompletableFuture<PartitionWork.Release> release = CompletableFuture.supplyAsync(() -> {
            try {
                return work.release(List.of(P0), Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> !work.takes(P0));
        assertThat(work.started(record(P0, 4))).isFalse();
        work.ended(record(P0, 1), true);
        assertThat(release).isNotDone();

        work.ended(record(P0, 2), true);

        PartitionWork.Release released = release.get(5, TimeUnit.SECONDS);
        assertThat(released.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(3)));
        assertThat(released.finished()).isEqualTo(2);
        assertThat(released.givenUp()).isZero();
        // The partition that stays is untouched.
        assertThat(work.running(List.of(P1))).isEqualTo(1);
    }

    @Test
    void givesUpWhatOutlastsTheGraceAndIgnoresItsEnd() throws Exception {
        start(P0, 1);
        long before = System.nanoTime();

        PartitionWork.Release release = work.release(List.of(P0), Duration.ofMillis(300));

        assertThat(Duration.ofNanos(System.nanoTime() - before)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(release.givenUp()).isEqualTo(1);
        assertThat(release.commits()).isEqualTo(Map.of(P0, new OffsetAndMetadata(1)));
        work.ended(record(P0, 1), true);
        assertThat(work.running(List.of(P0))).isZero();
    }

    @Test
    void leavesTheRecordsOfARevokedPartitionToTheNewOwnerUntilItIsAssignedAgain() throws Exception {
        work.release(List.of(P0), Duration.ZERO);

        assertThat(work.started(record(P0, 9))).isFalse();
        assertThat(work.started(record(P1, 9))).isTrue();

        work.assigned(List.of(P0));
        assertThat(work.started(record(P0, 9))).isTrue();
    }
}
