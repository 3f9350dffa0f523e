package io.imageworker.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.Lane;
import io.imageworker.config.ProducerWeights;
import io.imageworker.support.Pauses;
import io.imageworker.testing.TestConfig;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;

/** The read-ahead: records wait for their turn to go into progress, in turns among producers, bounded in bytes. */
class IntakeTest {

    private final AtomicLong now = new AtomicLong();
    private final PartitionWork partitions = new PartitionWork();
    private final PauseAwareCommit commit =
            new PauseAwareCommit(null, new Pauses(now::get), partitions, TestConfig.worker());
    private final Intake intake = new Intake(1, ProducerWeights.parse("b=2"), 1_000, partitions);
    private final List<UniEmitter<? super String>> working = new ArrayList<>();
    private final List<String> started = new ArrayList<>();
    private final List<Throwable> failures = new ArrayList<>();
    private long offset;

    /** A record of {@code producer} taken, waiting for its turn; its work runs until the test ends it. */
    private RecordContext take(String producer, AtomicBoolean draining) {
        RecordContext context = new RecordContext(null, null, "image-request", 0, offset++, Instant.now());
        assertThat(partitions.started(context)).isEqualTo(PartitionWork.Start.RUN);
        intake.inTurn(
                        Lane.NORMAL,
                        Message.of(new byte[10]),
                        context,
                        producer,
                        commit.track(),
                        draining::get,
                        () -> Uni.createFrom().<String>emitter(emitter -> {
                            started.add(producer + context.offset());
                            working.add(emitter);
                        }))
                .subscribe()
                .with(ignored -> {}, failures::add);
        return context;
    }

    @Test
    void recordsGoIntoProgressInWeightedTurnsAmongProducersWhateverTheOrderTheyCameIn() {
        AtomicBoolean draining = new AtomicBoolean();
        for (int i = 0; i < 4; i++) {
            take("a", draining);
        }
        for (int i = 0; i < 3; i++) {
            take("b", draining);
        }
        assertThat(intake.waiting(Lane.NORMAL)).isEqualTo(6);
        assertThat(commit.waitedWithin(java.time.Duration.ofSeconds(1))).isTrue();

        for (int i = 0; i < 6; i++) {
            working.get(i).complete("done");
        }

        // b weighs 2: two of b's for each one of a's while both wait (smooth weighted round-robin: b a b b a b ...).
        assertThat(started).containsExactly("a0", "b4", "a1", "b5", "b6", "a2", "a3");
        assertThat(intake.inProgress(Lane.NORMAL)).isEqualTo(1);
        assertThat(intake.waiting(Lane.NORMAL)).isZero();
    }

    @Test
    void aRecordWhoseTurnComesWhenTheWorkerDrainsOrItsPartitionIsGoneIsGivenUp() throws Exception {
        AtomicBoolean draining = new AtomicBoolean();
        take("a", draining);
        take("a", draining);
        take("b", draining);
        partitions.release(
                List.of(new org.apache.kafka.common.TopicPartition("image-request", 0)), java.time.Duration.ZERO);
        working.get(0).complete("done");
        draining.set(true);

        assertThat(started).containsExactly("a0");
        assertThat(failures).hasSize(2).allMatch(Intake.GivenUp.class::isInstance);
        assertThat(intake.inProgress(Lane.NORMAL)).isZero();
        assertThat(intake.waiting(Lane.NORMAL)).isZero();
    }

    @Test
    void theWaitingRecordsBytesAreBoundedButARecordAloneAlwaysGoes() {
        Intake.WaitingBytes bytes = new Intake.WaitingBytes(100);
        List<String> taken = new ArrayList<>();
        bytes.take(60).subscribe().with(ignored -> taken.add("first"));
        bytes.take(60).subscribe().with(ignored -> taken.add("second"));
        assertThat(taken).containsExactly("first");

        bytes.give(60);
        assertThat(taken).containsExactly("first", "second");
        bytes.give(60);
        bytes.take(500).subscribe().with(ignored -> taken.add("alone, larger than the bound"));
        assertThat(taken).hasSize(3);
        assertThat(bytes.held()).isEqualTo(500);
    }
}
