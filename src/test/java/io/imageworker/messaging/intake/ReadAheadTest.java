package io.imageworker.messaging.intake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.api.RequestStates;
import io.imageworker.contract.Lane;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.OffsetsFixture;
import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.messaging.parking.Parking;
import io.imageworker.messaging.results.RecordContext;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.spend.BudgetLog;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.Pauses;
import io.imageworker.testing.TestConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The read-ahead: records wait for their turn to go into progress, in turns among producers, bounded in bytes. */
class ReadAheadTest {

    private final AtomicLong now = new AtomicLong();
    private final OffsetsFixture offsets = new OffsetsFixture(now::get);
    /** The status read model of this test's registry: what a status query reads of the records taken. */
    private final RequestStates states = new RequestStates(Duration.ofMinutes(1), offsets.progress());

    private final Admission admission = admission(1, "b=2", 1_000);
    private final SteppingAside aside = steppingAside(admission);
    private final ReadAhead intake = readAhead(admission, aside, ParkingDecision.NEVER);
    private final List<UniEmitter<? super String>> working = new ArrayList<>();
    private final List<String> started = new ArrayList<>();
    private final List<Throwable> failures = new ArrayList<>();
    private long offset;

    /** The timers of the caps' rechecks (set only where a test sets a per-producer cap; the others recheck by hand). */
    private static final Vertx VERTX = Vertx.vertx();

    @AfterAll
    static void closeVertx() {
        VERTX.close().toCompletionStage().toCompletableFuture().join();
    }

    /**
     * The admission of a worker with {@code inProgress} places per lane shared by the producer weights {@code weights},
     * its waiting records' bytes at most {@code bound} (its memory budget {@link Admission#BUDGET_SHARE} times that),
     * within the windows of this test's partitions.
     */
    private Admission admission(int inProgress, String weights, long bound) {
        Map<String, String> settings = new HashMap<>();
        settings.put("image-worker.max-in-progress", Integer.toString(inProgress));
        if (!weights.isEmpty()) {
            settings.put("image-worker.producer-weights", weights);
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        return new Admission(
                TestConfig.worker(settings),
                new MemoryBudget(bound * Admission.BUDGET_SHARE, registry),
                offsets.inFlight(),
                registry);
    }

    /** The waits aside of the requests {@code admission} puts in progress, with no per-producer cap set. */
    private SteppingAside steppingAside(Admission admission) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        BudgetGuard noCaps = new BudgetGuard(
                TestConfig.settings(BudgetSettings.class),
                registry,
                System::currentTimeMillis,
                new Pauses(System::nanoTime),
                null);
        return new SteppingAside(admission, offsets.progress(), noCaps, offsets.shutdown(), VERTX);
    }

    /** The read-ahead of {@code admission} and {@code aside}, its records offered for parking parked as {@code parking} says. */
    private ReadAhead readAhead(Admission admission, SteppingAside aside, ParkingDecision parking) {
        return new ReadAhead(admission, aside, offsets.inFlight(), offsets.progress(), states, parking);
    }

    /** The same, with an admission and waits aside of its own. */
    private ReadAhead readAhead(int inProgress, ParkingDecision parking) {
        Admission own = admission(inProgress, "", 1_000_000);
        return readAhead(own, steppingAside(own), parking);
    }

    /** A record of {@code producer} taken, waiting for its turn; its work runs until the test ends it. */
    private RecordContext take(String producer) {
        return take(producer, () -> Uni.createFrom().nullItem());
    }

    /**
     * A record of {@code producer} taken, waiting for its turn; its work does {@code first}, then runs until the test
     * ends it. Its request id is its producer and offset.
     */
    private RecordContext take(String producer, Supplier<Uni<Void>> first) {
        return take(0, producer, first);
    }

    /** The same, of partition {@code partition} of the request topic. */
    private RecordContext take(int partition, String producer, Supplier<Uni<Void>> first) {
        RecordContext context = new RecordContext(null, null, "image-request", partition, offset++, Instant.now());
        InFlight.Run run = offsets.inFlight().take(context);
        assertThat(run.start()).isEqualTo(PartitionWork.Start.RUN);
        String id = producer + context.offset();
        intake.inTurn(asking(producer, context, run, id), () -> {
                    started.add(id);
                    return first.get().chain(() -> Uni.createFrom().<String>emitter(working::add));
                })
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
        assertThat(admission.waiting(Lane.NORMAL)).isEqualTo(6);
        assertThat(offsets.waitedWithin(Duration.ofSeconds(1))).isTrue();

        for (int i = 0; i < 6; i++) {
            working.get(i).complete("done");
        }

        // b weighs 2: two of b's for each one of a's while both wait (smooth weighted round-robin: b a b b a b ...).
        assertThat(started).containsExactly("a0", "b4", "a1", "b5", "b6", "a2", "a3");
        assertThat(admission.inProgress(Lane.NORMAL)).isEqualTo(1);
        assertThat(admission.waiting(Lane.NORMAL)).isZero();
    }

    @Test
    void aRecordPastItsProducersShareOrBeyondItsWindowIsParkedWithoutATurnAndTheOthersWaitForTheirs() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        // One place in progress; a producer with 2 records waiting parks its next ones; offsets from 10 lie beyond
        // their partition's window.
        Admission admitting = admission(1, "", 1_000_000);
        ReadAhead parking = readAhead(
                admitting,
                steppingAside(admitting),
                new Parking(2, record -> record.offset() < 10, registry, offsets.progress()));
        List<String> parked = new ArrayList<>();
        for (String producer : List.of("a", "a", "a", "a", "b")) {
            offer(parking, producer, offset++, parked);
        }
        offset = 10;
        offer(parking, "c", offset++, parked);

        // a0 in progress, a1 and a2 waiting: a3 is past a's share; b4 waits for its turn; c10 lies beyond the window.
        assertThat(started).containsExactly("a0");
        assertThat(parked).containsExactly("a3", "c10");
        assertThat(admitting.waiting(Lane.NORMAL)).isEqualTo(3);
        assertThat(states.of("a3")).contains(RequestStates.State.QUEUED);
        assertThat(registry.get("image_worker_requests_parked")
                        .tag("reason", "share")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("image_worker_requests_parked")
                        .tag("reason", "window")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(failures).isEmpty();
    }

    /**
     * Issue 48: a copy of a request parked here lately, read within its partition's window and its producer's share, is
     * parked too (after the first copy, into the same parked partition) instead of worked here at once, where it
     * could run while the first copy runs on the replica that reads the parked partition back.
     */
    @Test
    void aCopyOfARequestParkedHereLatelyIsParkedAfterItEvenWithinItsWindowAndShare() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        // Room for 4 in progress and a share of 100: only the first offset lies beyond its window.
        ReadAhead parking =
                readAhead(4, new Parking(100, record -> record.offset() != 0, registry, offsets.progress()));
        List<String> parked = new ArrayList<>();

        offer(parking, "a", 0, "x", parked);
        offer(parking, "a", 1, "x", parked);
        offer(parking, "a", 2, "y", parked);

        assertThat(parked)
                .as("the first copy beyond the window, the second after it")
                .containsExactly("x", "x");
        assertThat(started)
                .as("another request within the window goes in its turn")
                .containsExactly("y");
        assertThat(registry.get("image_worker_requests_parked")
                        .tag("reason", "again")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(failures).isEmpty();
    }

    /**
     * With ids unique within their producer (topic mode, issue 49) a request is known by {@code <producer>/<id>}: a copy
     * of a's parked request is still parked after it, while b's request of the same id is another request and goes in
     * its turn.
     */
    @Test
    void withIdsPerProducerACopyIsParkedAfterItsOwnProducersParkedRequestOnly() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RequestsInProgress perProducer = new RequestsInProgress(new Pauses(System::nanoTime), true);
        Admission own = admission(4, "", 1_000_000);
        ReadAhead parking = new ReadAhead(
                own,
                steppingAside(own),
                offsets.inFlight(),
                perProducer,
                new RequestStates(Duration.ofMinutes(1), perProducer),
                new Parking(100, record -> record.offset() != 0, registry, perProducer));
        List<String> parked = new ArrayList<>();

        offer(parking, "a", 0, "x", parked);
        offer(parking, "b", 1, "x", parked);
        offer(parking, "a", 2, "x", parked);

        assertThat(parked).as("a's x beyond the window, a's copy after it").containsExactly("x", "x");
        assertThat(started).as("b's x, another request").containsExactly("x");
        assertThat(registry.get("image_worker_requests_parked")
                        .tag("reason", "again")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    /**
     * A copy read while the park of its first copy is under way (its transaction not committed yet) is parked after it
     * too; once a park is given up (its transaction failed), the next copy goes in its turn unless it was parked before.
     */
    @Test
    void aCopyReadWhileItsFirstCopysParkIsUnderWayIsParkedAfterIt() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        // Only the offsets below 2 lie beyond their window.
        ReadAhead parking =
                readAhead(4, new Parking(100, record -> record.offset() >= 2, registry, offsets.progress()));
        List<String> parked = new ArrayList<>();
        List<UniEmitter<? super Void>> parks = new ArrayList<>();
        Supplier<Uni<Void>> underWay = () -> Uni.createFrom().emitter(parks::add);

        offer(parking, "a", 0, "x", parked, underWay);
        offer(parking, "a", 1, "z", parked, underWay);
        offer(parking, "a", 2, "x", parked);
        parks.get(1).fail(new IllegalStateException("the park's transaction failed"));
        offer(parking, "a", 3, "z", parked);
        parks.get(0).complete(null);
        offer(parking, "a", 4, "x", parked);

        assertThat(parked)
                .as("x beyond its window, z beyond it, x while the first park is under way, x again once parked")
                .containsExactly("x", "z", "x", "x");
        assertThat(started)
                .as("z's park was given up: its copy goes in its turn")
                .containsExactly("z");
        assertThat(registry.get("image_worker_requests_parked")
                        .tag("reason", "again")
                        .counter()
                        .count())
                .isEqualTo(2);
        assertThat(failures).hasSize(1);
    }

    /** The request {@code id} of {@code producer}, a record of 10 bytes, asking for its turn. */
    private static ReadAhead.Asking asking(String producer, RecordContext context, InFlight.Run run, String id) {
        return new ReadAhead.Asking(
                Lane.NORMAL, Message.of(new byte[10]), context, run, id, ReadAhead.Producer.of(producer));
    }

    /** Offers the record of {@code producer} at {@code at} to {@code intake} for parking; parked ones go to {@code parked}. */
    private void offer(ReadAhead intake, String producer, long at, List<String> parked) {
        offer(intake, producer, at, producer + at, parked);
    }

    /** The same, of the request {@code id}. */
    private void offer(ReadAhead intake, String producer, long at, String id, List<String> parked) {
        offer(intake, producer, at, id, parked, () -> Uni.createFrom().voidItem());
    }

    /** The same, its park ending as {@code park} does. */
    private void offer(
            ReadAhead intake, String producer, long at, String id, List<String> parked, Supplier<Uni<Void>> park) {
        RecordContext context = new RecordContext(null, null, "image-request", 0, at, Instant.now());
        InFlight.Run run = offsets.inFlight().take(context);
        intake.parkedOrInTurn(
                        asking(producer, context, run, id),
                        () -> {
                            parked.add(id);
                            return park.get();
                        },
                        () -> {
                            started.add(id);
                            return Uni.createFrom().<Void>nothing();
                        })
                .subscribe()
                .with(ignored -> {}, failures::add);
    }

    @Test
    void aRecordWhoseTurnComesAfterItsPartitionIsGoneIsGivenUp() throws Exception {
        take("a");
        take("a");
        take("b");
        offsets.revoke(new TopicPartition("image-request", 0));
        working.get(0).complete("done");

        assertThat(started).containsExactly("a0");
        assertThat(failures).hasSize(2).allMatch(ReadAhead.GivenUp.class::isInstance);
        assertThat(admission.inProgress(Lane.NORMAL)).isZero();
        assertThat(admission.waiting(Lane.NORMAL)).isZero();
    }

    /**
     * A request waiting for its turn whose partition goes to another worker is that worker's: it leaves its
     * producer's line, and reads queued here no more, at once, not at its turn, which may come long after (behind a
     * deep read-ahead, or a producer held by its cap); the requests behind it move up. Its turn still ends it, given
     * up.
     */
    @Test
    void aRequestWaitingForItsTurnLeavesItsLineAtOnceWhenItsPartitionGoesToAnotherWorker() throws Exception {
        take("a");
        take("a");
        take(1, "a", () -> Uni.createFrom().nullItem());
        assertThat(states.standing("a2").orElseThrow().position()).isEqualTo(3);

        offsets.revoke(new TopicPartition("image-request", 0));

        assertThat(states.standing("a1")).as("the request whose partition went").isEmpty();
        assertThat(states.of("a1")).isEmpty();
        // a0, in progress, stands in its line until its first call leaves or it ends.
        assertThat(states.standing("a2").orElseThrow().position()).isEqualTo(2);
        working.get(0).complete("done");
        assertThat(failures).hasSize(1).allMatch(ReadAhead.GivenUp.class::isInstance);
        assertThat(started).containsExactly("a0", "a2");
        assertThat(states.standing("a2")).as("in progress, no call made").isPresent();
    }

    /**
     * Copies of a request share its work ({@code processing.RequestProcessor}): a copy read again after a rebalance gave
     * its partition back may join the work of the copy given up in it, just as that work is handed over. While this
     * copy's own partition is still this worker's, it runs the request again (once) instead of ending unacknowledged on
     * a partition nobody will redeliver before the next rebalance.
     */
    @Test
    void aCopyWhoseSharedWorkWasHandedOverRunsItAgainWhileItsPartitionIsStillHere() {
        AtomicInteger attempts = new AtomicInteger();
        take(
                "a",
                () -> attempts.incrementAndGet() == 1
                        ? Uni.createFrom().failure(AbandonedException.givenUp("a0", "a copy of it was given up"))
                        : Uni.createFrom().nullItem());

        assertThat(started).containsExactly("a0", "a0");
        assertThat(failures).isEmpty();
        working.get(0).complete("done");
        assertThat(failures).isEmpty();
        assertThat(admission.inProgress(Lane.NORMAL)).isZero();
    }

    @Test
    void aRequestHandedOverOnceItsPartitionIsGoneIsNotRunAgain() throws Exception {
        AtomicReference<UniEmitter<? super Void>> handOver = new AtomicReference<>();
        take("a", () -> Uni.createFrom().<Void>emitter(handOver::set));
        offsets.revoke(new TopicPartition("image-request", 0));
        handOver.get().fail(AbandonedException.givenUp("a0", "its partition went to another worker"));

        assertThat(started).containsExactly("a0");
        assertThat(failures).singleElement().isInstanceOf(AbandonedException.class);
    }

    @Test
    void aRecordWhoseTurnComesWhenTheWorkerDrainsIsGivenUp() {
        take("a");
        take("b");
        offsets.inFlight().drain(Duration.ofSeconds(30));
        working.get(0).complete("done");

        assertThat(started).containsExactly("a0");
        assertThat(failures).hasSize(1).allMatch(ReadAhead.GivenUp.class::isInstance);
        assertThat(admission.waiting(Lane.NORMAL)).isZero();
    }

    /** A record of partition 0 of the request topic at {@code offset}, as Kafka's connector delivers it. */
    private static Message<byte[]> delivered(long offset, byte[] payload) {
        return Message.of(
                payload,
                Metadata.of(new IncomingKafkaRecordMetadata<>(
                        new ConsumerRecord<byte[], byte[]>("image-request", 0, offset, null, payload), "requests")));
    }

    @Test
    void aWaitingRecordIsChargedItsBytesItsParsedJsonAndWhatEveryRecordHolds() {
        long one = Admission.RECORD_OVERHEAD + 2 * 30;

        // Two records of 30 bytes fit a bound of exactly two records' charge, not one byte less.
        assertThat(takenWithin(2 * one)).isEqualTo(2);
        assertThat(takenWithin(2 * one - 1)).isEqualTo(1);
    }

    /** How many of two records of 30 bytes a lane takes whose waiting records may hold {@code bound} bytes. */
    private int takenWithin(long bound) {
        Admission bounded = admission(1, "", bound);
        List<Message<byte[]>> taken = new ArrayList<>();
        bounded.taken(Lane.NORMAL, Multi.createFrom().items(delivered(0, new byte[30]), delivered(1, new byte[30])))
                .subscribe()
                .with(taken::add);
        return taken.size();
    }

    @Test
    void aRecordFarAboveItsPartitionsFirstRecordNotAcknowledgedWaitsForThatOneWhileOtherPartitionsGoBy() {
        Admission windowedAdmission = admission(3, "", 1_000_000);
        ReadAhead windowed = readAhead(windowedAdmission, steppingAside(windowedAdmission), ParkingDecision.NEVER);
        List<String> inProgress = new ArrayList<>();
        List<InFlight.Run> runs = new ArrayList<>();
        for (long[] position : new long[][] {{0, 0}, {0, 1_000_000}, {1, 5_000_000}}) {
            RecordContext context =
                    new RecordContext(null, null, "image-request", (int) position[0], position[1], Instant.now());
            InFlight.Run run = offsets.inFlight().take(context);
            runs.add(run);
            windowed.inTurn(
                            new ReadAhead.Asking(
                                    Lane.NORMAL,
                                    Message.of(new byte[1]),
                                    context,
                                    run,
                                    null,
                                    ReadAhead.Producer.of("a")),
                            () -> {
                                inProgress.add(context.position());
                                return Uni.createFrom().<Void>emitter(ignored -> {});
                            })
                    .subscribe()
                    .with(ignored -> {}, failures::add);
        }

        // Places are free, but the record a million offsets above partition 0's first one not acknowledged waits
        // (read ahead); partition 1's record goes by.
        assertThat(inProgress).containsExactly("image-request-0@0", "image-request-1@5000000");
        assertThat(windowedAdmission.waiting(Lane.NORMAL)).isEqualTo(1);

        runs.get(0).end(InFlight.Outcome.ACKNOWLEDGED);

        assertThat(windowedAdmission.waiting(Lane.NORMAL)).isZero();

        assertThat(inProgress)
                .containsExactly("image-request-0@0", "image-request-1@5000000", "image-request-0@1000000");
    }

    @Test
    void aRequestWaitingForItsTurnReadsQueuedUntilItsTurnComes() {
        take("a");
        take("b");
        take("c");
        // a is in progress (its place taken: no state of its own here, RequestProcessor tells it); b and c wait.
        assertThat(states.of("b1")).contains(RequestStates.State.QUEUED);
        assertThat(states.of("c2")).contains(RequestStates.State.QUEUED);

        working.get(0).complete("done");

        // b had its turn (from now on its processing tells where it is); c still waits.
        assertThat(started).containsExactly("a0", "b1");
        assertThat(states.of("b1")).isEmpty();
        assertThat(states.of("c2")).contains(RequestStates.State.QUEUED);
        working.get(1).complete("done");
        working.get(2).complete("done");
        assertThat(states.of("c2")).isEmpty();
        assertThat(states.size()).isZero();
    }

    @Test
    void theWaitingRecordsBytesAreBoundedButARecordAloneAlwaysGoes() {
        WaitingBytes bytes = new WaitingBytes(100);
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

    @Test
    void aProducerHeldByItsCapGetsNoTurnWhileTheOthersGoOnAndGetsTurnsAgainOnceReleased() {
        Set<String> held = ConcurrentHashMap.newKeySet();
        aside.holdWhile(held::contains);
        take("a");
        held.add("a");
        take("a");
        take("a");
        take("b");
        take("b");

        working.get(0).complete("done");
        working.get(1).complete("done");
        assertThat(started).as("b's records take the place, a's wait").containsExactly("a0", "b3", "b4");
        working.get(2).complete("done");
        assertThat(admission.inProgress(Lane.NORMAL))
                .as("the place stays free while a is held")
                .isZero();
        assertThat(admission.waiting(Lane.NORMAL)).isEqualTo(2);

        held.remove("a");
        aside.recheck();
        assertThat(started).containsExactly("a0", "b3", "b4", "a1");
        working.get(3).complete("done");
        assertThat(started).containsExactly("a0", "b3", "b4", "a1", "a2");
    }

    /**
     * With a per-producer cap set, a producer over it gets no turn, and once its window allows another call its turn
     * comes by itself: the caps are looked at again on a Vert.x timer (nothing here calls {@code recheck}).
     */
    @Test
    void aProducerOverItsCapGetsItsTurnAgainOnTheTimerOnceItsWindowAllowsACall() {
        AtomicInteger usedByA = new AtomicInteger(1);
        // Its turn comes on the timer's thread.
        List<String> admitted = new CopyOnWriteArrayList<>();
        BudgetLog log = new BudgetLog() {
            @Override
            public Uni<Boolean> claim(String scope, String claim, long window, int limit) {
                return Uni.createFrom().item(true);
            }

            @Override
            public void release(String scope, String secret, long window) {}

            @Override
            public int used(String scope, long window) {
                return "a".equals(scope) ? usedByA.get() : 0;
            }

            @Override
            public Optional<String> stall() {
                return Optional.empty();
            }
        };
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        BudgetGuard capOfA = new BudgetGuard(
                TestConfig.settings(BudgetSettings.class, Map.of("image-worker.budget.per-producer", "a=1/3650d")),
                registry,
                System::currentTimeMillis,
                new Pauses(System::nanoTime),
                log);
        SteppingAside capped = new SteppingAside(admission, offsets.progress(), capOfA, offsets.shutdown(), VERTX);
        try {
            ReadAhead held = readAhead(admission, capped, ParkingDecision.NEVER);
            RecordContext context = new RecordContext(null, null, "image-request", 0, offset++, Instant.now());
            InFlight.Run run = offsets.inFlight().take(context);
            run.start();
            held.inTurn(asking("a", context, run, "a0"), () -> {
                        admitted.add("a0");
                        return Uni.createFrom().<Void>nothing();
                    })
                    .subscribe()
                    .with(ignored -> {}, failures::add);
            assertThat(admitted).as("a is over its cap: no turn").isEmpty();
            assertThat(capOfA.held("a"))
                    .as("its record counts as held in the intake")
                    .isEqualTo(1);

            usedByA.set(0);

            await().atMost(Duration.ofSeconds(10)).until(() -> admitted.contains("a0"));
            assertThat(failures).isEmpty();
        } finally {
            capped.stop();
        }
    }

    @Test
    void aRequestWaitingAsideForItsProducersCapGivesItsPlaceToOthersAndTakesItBackFirstOfItsProducer() {
        List<UniEmitter<? super Void>> capWaits = new ArrayList<>();
        take("a", () -> aside.of("a0").around(Uni.createFrom().<Void>emitter(capWaits::add)));
        take("b");
        take("a");

        assertThat(started).as("a0 waits aside: b's record has its place").containsExactly("a0", "b1");
        assertThat(admission.inProgress(Lane.NORMAL)).isEqualTo(1);
        capWaits.get(0).complete(null);
        assertThat(working).as("a0 waits for a place again").hasSize(1);

        working.get(0).complete("done");
        assertThat(started).as("a0 takes its place back before a's next record").containsExactly("a0", "b1");
        assertThat(working).hasSize(2);
        assertThat(admission.inProgress(Lane.NORMAL)).isEqualTo(1);
        working.get(1).complete("done");
        assertThat(started).containsExactly("a0", "b1", "a2");
        assertThat(aside.of("nobody")).isSameAs(BudgetGuard.Aside.NONE);
        assertThat(failures).isEmpty();
    }

    @Test
    void aRequestEndedWhileAsideGivesNoPlaceItDoesNotHold() {
        List<UniEmitter<? super Void>> capWaits = new ArrayList<>();
        take("a", () -> aside.of("a0")
                .around(Uni.createFrom().<Void>emitter(capWaits::add))
                .chain(() -> Uni.createFrom().failure(new IllegalStateException("cancelled"))));
        take("b");
        take("b");
        capWaits.get(0).complete(null);
        working.get(0).complete("done");

        assertThat(started).containsExactly("a0", "b1", "b2");
        assertThat(admission.inProgress(Lane.NORMAL)).isEqualTo(1);
        working.get(1).complete("done");
        assertThat(admission.inProgress(Lane.NORMAL)).isZero();
    }

    @Test
    void recordsOfAHeldProducerHaveTheirTurnWhenTheWorkerDrainsAndAreGivenUpNotWaitedFor() {
        aside.holdWhile(producer -> true);
        take("a");
        take("a");
        assertThat(started).isEmpty();
        offsets.inFlight().drain(Duration.ofSeconds(30));

        aside.recheck();

        assertThat(started).isEmpty();
        assertThat(failures).hasSize(2).allMatch(ReadAhead.GivenUp.class::isInstance);
        assertThat(admission.waiting(Lane.NORMAL)).isZero();
    }

    @Test
    void aRequestWaitingAsideIsNotWaitedForByARevocationAndEndsUnacknowledgedOnceItsPartitionIsGone() throws Exception {
        take("a", () -> aside.of("a0").around(Uni.createFrom().<Void>nothing()));
        assertThat(started).containsExactly("a0");

        long before = System.nanoTime();
        offsets.revoke(new TopicPartition("image-request", 0), Duration.ofSeconds(20));
        assertThat(Duration.ofNanos(System.nanoTime() - before))
                .as("the revocation did not wait for the request aside")
                .isLessThan(Duration.ofSeconds(10));
        assertThat(failures).isEmpty();

        aside.recheck();
        assertThat(failures).singleElement().isInstanceOf(AbandonedException.class);
        assertThat(admission.inProgress(Lane.NORMAL)).isZero();
    }
}
