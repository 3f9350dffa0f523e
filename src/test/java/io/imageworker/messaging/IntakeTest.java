package io.imageworker.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.Lane;
import io.imageworker.config.ProducerWeights;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.OffsetsFixture;
import io.imageworker.messaging.offsets.PartitionWork;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;

/** The read-ahead: records wait for their turn to go into progress, in turns among producers, bounded in bytes. */
class IntakeTest {

    private final AtomicLong now = new AtomicLong();
    private final OffsetsFixture offsets = new OffsetsFixture(now::get);
    private final Intake intake = new Intake(1, ProducerWeights.parse("b=2"), 1_000);
    private final List<UniEmitter<? super String>> working = new ArrayList<>();
    private final List<String> started = new ArrayList<>();
    private final List<Throwable> failures = new ArrayList<>();
    private long offset;

    /** A record of {@code producer} taken, waiting for its turn; its work runs until the test ends it. */
    private RecordContext take(String producer) {
        RecordContext context = new RecordContext(null, null, "image-request", 0, offset++, Instant.now());
        InFlight.Run run = offsets.inFlight().take(context);
        assertThat(run.start()).isEqualTo(PartitionWork.Start.RUN);
        intake.inTurn(Lane.NORMAL, Message.of(new byte[10]), context, producer, run, () -> Uni.createFrom()
                        .<String>emitter(emitter -> {
                            started.add(producer + context.offset());
                            working.add(emitter);
                        }))
                .subscribe()
                .with(ignored -> {}, failures::add);
        return context;
    }

    @Test
    void recordsGoIntoProgressInWeightedTurnsAmongProducersWhateverTheOrderTheyCameIn() {
        for (int i = 0; i < 4; i++) {
            take("a");
        }
        for (int i = 0; i < 3; i++) {
            take("b");
        }
        assertThat(intake.waiting(Lane.NORMAL)).isEqualTo(6);
        assertThat(offsets.waitedWithin(Duration.ofSeconds(1))).isTrue();

        for (int i = 0; i < 6; i++) {
            working.get(i).complete("done");
        }

        // b weighs 2: two of b's for each one of a's while both wait (smooth weighted round-robin: b a b b a b ...).
        assertThat(started).containsExactly("a0", "b4", "a1", "b5", "b6", "a2", "a3");
        assertThat(intake.inProgress(Lane.NORMAL)).isEqualTo(1);
        assertThat(intake.waiting(Lane.NORMAL)).isZero();
    }

    @Test
    void aRecordWhoseTurnComesAfterItsPartitionIsGoneIsGivenUp() throws Exception {
        take("a");
        take("a");
        take("b");
        offsets.revoke(new TopicPartition("image-request", 0));
        working.get(0).complete("done");

        assertThat(started).containsExactly("a0");
        assertThat(failures).hasSize(2).allMatch(Intake.GivenUp.class::isInstance);
        assertThat(intake.inProgress(Lane.NORMAL)).isZero();
        assertThat(intake.waiting(Lane.NORMAL)).isZero();
    }

    @Test
    void aRecordWhoseTurnComesWhenTheWorkerDrainsIsGivenUp() {
        take("a");
        take("b");
        offsets.inFlight().drain(Duration.ofSeconds(30));
        working.get(0).complete("done");

        assertThat(started).containsExactly("a0");
        assertThat(failures).hasSize(1).allMatch(Intake.GivenUp.class::isInstance);
        assertThat(intake.waiting(Lane.NORMAL)).isZero();
    }

    @Test
    void aWaitingRecordIsChargedItsBytesAndItsParsedJson() {
        Intake bounded = new Intake(1, ProducerWeights.parse(""), 100);
        List<Message<byte[]>> taken = new ArrayList<>();
        bounded.taken(Lane.NORMAL, Multi.createFrom().items(Message.of(new byte[30]), Message.of(new byte[30])))
                .subscribe()
                .with(taken::add);

        // 30 bytes held twice over are 60 of the bound of 100: a second record of 30 would make 120.
        assertThat(taken).hasSize(1);
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
