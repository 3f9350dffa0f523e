package io.imageworker.messaging.parking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

class ParkedHoldsTest {

    private static final TopicPartition OF_A = new TopicPartition("parked", 4);
    private static final TopicPartition OF_B = new TopicPartition("parked", 2);

    private final Map<TopicPartition, Integer> waiting = new HashMap<>();
    /** Appended to on an event loop too ({@link #heldPartitionsAreLookedAtAgainOnAVertxTimer}). */
    private final List<String> calls = new CopyOnWriteArrayList<>();

    private volatile boolean resumedOnAnEventLoop;
    private final AtomicLong now = new AtomicLong();
    private boolean draining;
    private final ParkedHolds holds = new ParkedHolds(
            partition -> waiting.getOrDefault(partition, 0),
            8,
            new ParkedHolds.Partitions() {
                @Override
                public void pause(Set<TopicPartition> partitions) {
                    partitions.forEach(partition -> calls.add("pause " + partition));
                }

                @Override
                public void resume(Set<TopicPartition> partitions) {
                    resumedOnAnEventLoop = Context.isOnEventLoopThread();
                    partitions.forEach(partition -> calls.add("resume " + partition));
                }
            },
            () -> draining,
            now::get);

    @Test
    void aPartitionWithItsShareWaitingIsPausedAndTheOthersAreNot() {
        waiting.put(OF_A, 8);
        waiting.put(OF_B, 7);

        holds.taken(OF_A, 0);
        holds.taken(OF_B, 0);

        assertThat(calls).containsExactly("pause parked-4");
        assertThat(holds.held()).containsExactly(OF_A);
    }

    /** Polled and not yet taken counts too: a lane that takes nothing holds no more than a share of each partition. */
    @Test
    void recordsPolledAndNotTakenCountTowardTheShare() {
        holds.polled(polled(OF_A, 5));
        assertThat(calls).isEmpty();

        holds.polled(polled(OF_A, 3));
        assertThat(calls).containsExactly("pause parked-4");

        calls.clear();
        for (int i = 0; i < 4; i++) {
            holds.taken(OF_A, 0);
        }
        holds.recheck();
        assertThat(calls).as("4 polled and not taken: half the share").isEmpty();

        holds.taken(OF_A, 0);
        holds.recheck();
        assertThat(calls).as("3 polled and not taken, none waiting").containsExactly("resume parked-4");
    }

    @Test
    void aHeldPartitionIsResumedOnceFewerThanHalfItsShareWait() {
        waiting.put(OF_A, 9);
        holds.taken(OF_A, 0);
        calls.clear();

        waiting.put(OF_A, 4);
        holds.recheck();
        assertThat(calls).as("still half its share waiting").isEmpty();

        waiting.put(OF_A, 3);
        holds.recheck();
        assertThat(calls).containsExactly("resume parked-4");
        assertThat(holds.held()).isEmpty();
    }

    /** A held partition goes on as its records' turns come, not at the next look: a lone backlog runs at its calls' pace. */
    @Test
    void aHeldPartitionIsResumedAtTheTurnThatTakesItBelowHalfItsShare() {
        waiting.put(OF_A, 8);
        holds.taken(OF_A, 0);
        calls.clear();

        waiting.put(OF_A, 4);
        holds.admitted(OF_A);
        holds.admitted(OF_B);
        assertThat(calls).as("half its share still waits; B is not held").isEmpty();

        waiting.put(OF_A, 3);
        holds.admitted(OF_A);
        holds.admitted(OF_A);
        assertThat(calls).as("resumed once").containsExactly("resume parked-4");
        assertThat(holds.held()).isEmpty();
    }

    /**
     * Besides each record's turn, the held partitions are looked at every {@link ParkedHolds#RECHECK} on Vert.x's timers
     * (on an event loop): a partition below half its share with no turn to tell it is resumed by a look.
     */
    @Test
    void heldPartitionsAreLookedAtAgainOnAVertxTimer() {
        waiting.put(OF_A, 8);
        holds.taken(OF_A, 0);
        waiting.put(OF_A, 3);
        calls.clear();
        Vertx vertx = Vertx.vertx();
        try {
            holds.recheckEvery(vertx);

            await().atMost(Duration.ofSeconds(10)).until(() -> calls.contains("resume parked-4"));
            assertThat(resumedOnAnEventLoop).isTrue();
            assertThat(holds.held()).isEmpty();
        } finally {
            holds.close();
            vertx.close().toCompletionStage().toCompletableFuture().join();
        }
    }

    @Test
    void nothingIsResumedOnceTheWorkerDrains() {
        waiting.put(OF_A, 8);
        holds.taken(OF_A, 0);
        calls.clear();

        draining = true;
        waiting.put(OF_A, 0);
        holds.recheck();
        holds.admitted(OF_A);

        assertThat(calls).isEmpty();
    }

    /** A partition given up starts again from nothing: what was polled of it is not the new owner's to count. */
    @Test
    void aPartitionGivenUpStartsItsCountAgain() {
        holds.polled(polled(OF_A, 8));
        holds.released(List.of(OF_A));
        calls.clear();

        holds.polled(polled(OF_A, 1));

        assertThat(calls).isEmpty();
        assertThat(holds.held()).isEmpty();
    }

    /** A count that is off (records SmallRye dropped) cannot hold a partition for ever: it starts again once stale. */
    @Test
    void aHeldPartitionThatGivesNothingWithNothingWaitingIsResumedOnceStale() {
        holds.polled(polled(OF_A, 8));
        calls.clear();

        now.addAndGet(ParkedHolds.STALE.minus(Duration.ofMillis(1)).toNanos());
        holds.recheck();
        assertThat(calls).isEmpty();

        now.addAndGet(Duration.ofMillis(2).toNanos());
        holds.recheck();
        assertThat(calls).containsExactly("resume parked-4");
    }

    /**
     * A stream stalled before the lane (a record taken from the connector's queue waits for room at the byte bound)
     * keeps its holds however long: the held partition's records really are queued, and starting its count would let
     * another share into the queue every {@link ParkedHolds#STALE}.
     */
    @Test
    void aStalledStreamKeepsItsHoldsPastStale() {
        holds.polled(polled(OF_A, 8));
        holds.polled(polled(OF_B, 9));
        holds.left();
        holds.taken(OF_B, 0);
        holds.left();
        calls.clear();

        now.addAndGet(ParkedHolds.STALE.multipliedBy(10).toNanos());
        holds.recheck();
        assertThat(calls)
                .as("one of B's records left the queue and waits for room")
                .isEmpty();
        assertThat(holds.held()).containsExactlyInAnyOrder(OF_A, OF_B);

        holds.taken(OF_B, 0);
        now.addAndGet(ParkedHolds.STALE.toNanos() + 1);
        holds.recheck();
        assertThat(calls)
                .as("nothing waits for room: counts of partitions that gave nothing for STALE start again")
                .containsExactlyInAnyOrder("resume parked-4", "resume parked-2");
    }

    /**
     * Records are held by their bytes too: a few large ones (edits with images inline) queued in the connector hold
     * their partition before its share of records does, since the connector's queue is outside the byte bound.
     */
    @Test
    void aFetchsWorthOfBytesQueuedHoldsAPartitionBeforeItsShare() {
        int size = (int) (ParkedHolds.QUEUED_BYTES / 2);
        holds.polled(polledOf(OF_A, size));
        assertThat(calls).as("one record of half a fetch").isEmpty();

        holds.polled(polledOf(OF_A, size));
        assertThat(calls).as("two: a fetch's worth, far below the share of 8").containsExactly("pause parked-4");

        calls.clear();
        holds.taken(OF_A, size);
        holds.recheck();
        assertThat(calls).as("half a fetch still queued").isEmpty();

        holds.taken(OF_A, size);
        holds.recheck();
        assertThat(calls).containsExactly("resume parked-4");
    }

    private static ConsumerRecords<Object, Object> polledOf(TopicPartition partition, int valueBytes) {
        ConsumerRecord<Object, Object> record = new ConsumerRecord<>(
                partition.topic(),
                partition.partition(),
                0,
                0L,
                TimestampType.CREATE_TIME,
                0,
                valueBytes,
                null,
                null,
                new RecordHeaders(),
                Optional.empty());
        return new ConsumerRecords<>(Map.of(partition, List.of(record)));
    }

    private static ConsumerRecords<Object, Object> polled(TopicPartition partition, int count) {
        List<ConsumerRecord<Object, Object>> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(new ConsumerRecord<>(partition.topic(), partition.partition(), i, null, null));
        }
        return new ConsumerRecords<>(Map.of(partition, records));
    }
}
