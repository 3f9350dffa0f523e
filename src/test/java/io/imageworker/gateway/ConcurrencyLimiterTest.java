package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.imageworker.config.ProducerWeights;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.Lane;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class ConcurrencyLimiterTest {

    /** Work that stays in flight until the test completes it. */
    private static final class Pending {
        final List<UniEmitter<? super String>> emitters = new ArrayList<>();
        final AtomicInteger started = new AtomicInteger();

        Uni<String> work() {
            return Uni.createFrom().emitter(emitter -> {
                started.incrementAndGet();
                emitters.add(emitter);
            });
        }
    }

    /**
     * A limiter with one call in flight and calls queued behind it, each of which notes what it is given in
     * {@link #started} when it gets its permit.
     */
    private static final class Queue<T> {
        final ConcurrencyLimiter limiter;
        final Pending pending = new Pending();
        final List<T> started = new ArrayList<>();

        Queue(ConcurrencyLimiter limiter) {
            this.limiter = limiter;
            limiter.run(pending::work).subscribe().with(x -> {});
        }

        /** A call of {@code producer} in {@code lane} that notes {@code note} when it gets its permit. */
        Cancellable call(Lane lane, String producer, T note) {
            return limiter.run(lane, producer, () -> {
                        started.add(note);
                        return pending.work();
                    })
                    .subscribe()
                    .with(x -> {});
        }

        /**
         * Ends the calls in flight one at a time, in the order they started, until the {@code calls} waiting calls have
         * all started: each end starts exactly one.
         */
        void releaseOneAtATime(int calls) {
            for (int i = 0; i < calls; i++) {
                pending.emitters.get(i).complete("done");
                assertThat(started).hasSize(i + 1);
            }
        }
    }

    @Test
    void neverRunsMoreThanTheLimitAndStartsWaitersInArrivalOrder() {
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 2);
        Pending pending = new Pending();
        List<String> done = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            limiter.run(pending::work).subscribe().with(done::add);
        }

        assertThat(pending.started).hasValue(2);
        assertThat(limiter.inFlight()).isEqualTo(2);
        assertThat(limiter.waiting()).isEqualTo(3);

        pending.emitters.get(0).complete("a");
        assertThat(pending.started).hasValue(3);
        assertThat(limiter.inFlight()).isEqualTo(2);

        pending.emitters.get(1).fail(new RuntimeException("a failure frees its permit too"));
        pending.emitters.get(2).complete("c");
        pending.emitters.get(3).complete("d");
        pending.emitters.get(4).complete("e");

        assertThat(done).containsExactly("a", "c", "d", "e");
        assertThat(limiter.inFlight()).isZero();
        assertThat(limiter.waiting()).isZero();
    }

    @Test
    void halvesOnRateLimitDownToTheFloorAndGrowsBackOneStepPerLimitSuccesses() {
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(2, 16);

        limiter.onRateLimited();
        assertThat(limiter.limit()).isEqualTo(8);
        limiter.onRateLimited();
        limiter.onRateLimited();
        limiter.onRateLimited();
        assertThat(limiter.limit()).isEqualTo(2);

        limiter.onSuccess();
        assertThat(limiter.limit()).isEqualTo(2);
        limiter.onSuccess();
        assertThat(limiter.limit()).isEqualTo(3);
        for (int i = 0; i < 1000; i++) {
            limiter.onSuccess();
        }
        assertThat(limiter.limit()).isEqualTo(16);
    }

    @Test
    void aRaisedLimitStartsAWaiter() {
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 2);
        limiter.onRateLimited();
        Pending pending = new Pending();
        limiter.run(pending::work).subscribe().with(x -> {});
        limiter.run(pending::work).subscribe().with(x -> {});
        assertThat(pending.started).hasValue(1);

        limiter.onSuccess();

        assertThat(pending.started).hasValue(2);
    }

    @Test
    void refusesAFloorAboveTheCeiling() {
        assertThatThrownBy(() -> new ConcurrencyLimiter(3, 2)).isInstanceOf(IllegalArgumentException.class);
    }

    /** The lanes in the order their waiting calls got a permit, one released at a time. */
    private static List<Lane> grantOrder(double minShare, int normalWaiting, int priorityWaiting) {
        Queue<Lane> queue = new Queue<>(new ConcurrencyLimiter(1, 1, minShare));
        for (int i = 0; i < normalWaiting; i++) {
            queue.call(Lane.NORMAL, ImageRequest.DEFAULT_PRODUCER, Lane.NORMAL);
        }
        for (int i = 0; i < priorityWaiting; i++) {
            queue.call(Lane.PRIORITY, ImageRequest.DEFAULT_PRODUCER, Lane.PRIORITY);
        }
        assertThat(queue.limiter.waiting(Lane.NORMAL)).isEqualTo(normalWaiting);
        assertThat(queue.limiter.waiting(Lane.PRIORITY)).isEqualTo(priorityWaiting);
        queue.releaseOneAtATime(normalWaiting + priorityWaiting);
        return queue.started;
    }

    private static long count(List<Lane> lanes, Lane lane) {
        return lanes.stream().filter(lane::equals).count();
    }

    @Test
    void givesAFreePermitToAPriorityCallBeforeNormalCallsThatWaitedLonger() {
        List<Lane> order = grantOrder(0.2, 3, 1);

        assertThat(order).containsExactly(Lane.PRIORITY, Lane.NORMAL, Lane.NORMAL, Lane.NORMAL);
    }

    @Test
    void keepsTheNormalLanesLeastShareOfThePermitsWhileBothLanesWait() {
        List<Lane> order = grantOrder(0.2, 40, 40);

        // While both wait (the first 50 permits: 40 priority, 10 normal), every fifth goes to the normal lane.
        List<Lane> whileBothWait = order.subList(0, 50);
        assertThat(count(whileBothWait, Lane.NORMAL)).isEqualTo(10);
        assertThat(whileBothWait.subList(0, 5))
                .containsExactly(Lane.PRIORITY, Lane.PRIORITY, Lane.PRIORITY, Lane.PRIORITY, Lane.NORMAL);
        // Then only the normal lane waits, and gets every permit.
        assertThat(order.subList(50, 80)).containsOnly(Lane.NORMAL);
    }

    @Test
    void withNoShareServesTheNormalLaneOnlyWhenNoPriorityCallWaits() {
        List<Lane> order = grantOrder(0, 5, 5);

        assertThat(order)
                .containsExactly(
                        Lane.PRIORITY,
                        Lane.PRIORITY,
                        Lane.PRIORITY,
                        Lane.PRIORITY,
                        Lane.PRIORITY,
                        Lane.NORMAL,
                        Lane.NORMAL,
                        Lane.NORMAL,
                        Lane.NORMAL,
                        Lane.NORMAL);
    }

    @Test
    void refusesAShareOutsideZeroToOne() {
        assertThatThrownBy(() -> new ConcurrencyLimiter(1, 2, 1.5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ConcurrencyLimiter(1, 2, -0.1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ConcurrencyLimiter(1, 2, Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPermitGivenToACallerThatCancelsAtThatMomentGoesBackToTheLimiter() throws Exception {
        // A cancel (contract v1.2) or the drain cuts a wait for a permit short; racing the permit's grant, it must
        // neither keep the permit nor leave it with no one.
        raceACancelAgainstTheGrant(new ConcurrencyLimiter(1, 1), "default", "default", null);
    }

    /**
     * 3000 rounds: a call of {@code holding} in flight, one of {@code cancelling} waiting (and one of {@code behind}
     * after it, when named); the call in flight ends while the waiting one is cancelled, on two threads at once. No
     * permit may be kept or lost, and the call behind runs.
     */
    private static void raceACancelAgainstTheGrant(
            ConcurrencyLimiter limiter, String holding, String cancelling, String behind) throws Exception {
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 3_000; round++) {
                List<UniEmitter<? super String>> holder = new ArrayList<>();
                limiter.run(Lane.NORMAL, holding, () -> Uni.createFrom().<String>emitter(holder::add))
                        .subscribe()
                        .with(ignored -> {});
                Cancellable waiting = limiter.run(
                                Lane.NORMAL, cancelling, () -> Uni.createFrom().item("second"))
                        .subscribe()
                        .with(ignored -> {});
                AtomicInteger third = new AtomicInteger();
                if (behind != null) {
                    limiter.run(Lane.NORMAL, behind, () -> {
                                third.incrementAndGet();
                                return Uni.createFrom().item("third");
                            })
                            .subscribe()
                            .with(ignored -> {});
                }
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                var ended = threads.submit(() -> {
                    go.await();
                    holder.get(0).complete("first");
                    return null;
                });
                var cancelled = threads.submit(() -> {
                    go.await();
                    waiting.cancel();
                    return null;
                });
                go.countDown();
                ended.get();
                cancelled.get();
                if (behind != null) {
                    assertThat(third)
                            .as("the call behind ran in round %d", round)
                            .hasValue(1);
                }
                assertThat(limiter.inFlight())
                        .as("permits held after round %d", round)
                        .isZero();
                assertThat(limiter.waiting()).isZero();
                assertThat(limiter.waiting(cancelling)).isZero();
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * The producers in the order their waiting calls got a permit: {@code arrivals} (producer names, in the order their
     * calls come) all wait behind one call in flight, then the permits are freed one at a time.
     */
    private static List<String> producerOrder(ProducerWeights weights, List<String> arrivals) {
        Queue<String> queue = new Queue<>(new ConcurrencyLimiter(1, 1, 0, weights));
        for (String producer : arrivals) {
            queue.call(Lane.NORMAL, producer, producer);
        }
        assertThat(queue.limiter.waiting()).isEqualTo(arrivals.size());
        queue.releaseOneAtATime(arrivals.size());
        assertThat(queue.limiter.waiting()).isZero();
        return queue.started;
    }

    /** {@code count} calls of {@code producer}. */
    private static List<String> calls(String producer, int count) {
        return java.util.Collections.nCopies(count, producer);
    }

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> both = new ArrayList<>(first);
        both.addAll(second);
        return both;
    }

    @Test
    void producersWithWaitingCallsTakeTurnsWhateverTheOrderTheirCallsCameIn() {
        // A's backlog of 30 came first, then B's 5: B does not wait for A's backlog.
        List<String> order = producerOrder(ProducerWeights.EQUAL, concat(calls("a", 30), calls("b", 5)));

        assertThat(order.subList(0, 10)).containsExactly("a", "b", "a", "b", "a", "b", "a", "b", "a", "b");
        assertThat(order.subList(10, 35)).containsOnly("a");
    }

    @Test
    void aProducerAloneGetsEveryPermitInTheOrderItsCallsCame() {
        Queue<Integer> queue = new Queue<>(new ConcurrencyLimiter(1, 1, 0, ProducerWeights.parse("solo=1,other=9")));
        for (int i = 0; i < 20; i++) {
            queue.call(Lane.NORMAL, "solo", i);
        }
        assertThat(queue.limiter.waiting("solo")).isEqualTo(20);
        queue.releaseOneAtATime(20);

        assertThat(queue.started)
                .containsExactlyElementsOf(
                        java.util.stream.IntStream.range(0, 20).boxed().toList());
        assertThat(queue.limiter.waiting("solo")).isZero();
    }

    @Test
    void weightsGiveEachProducerItsShareSpreadOutWhileBothWait() {
        List<String> order = producerOrder(
                ProducerWeights.parse("catalogue=1,edits=4"), concat(calls("catalogue", 40), calls("edits", 40)));

        // While both wait (the first 50 permits: 40 of edits, 10 of catalogue), edits gets 4 for each 1 of catalogue,
        // in every run of five, not in bursts.
        for (int run = 0; run < 10; run++) {
            List<String> five = order.subList(run * 5, run * 5 + 5);
            assertThat(five.stream().filter("edits"::equals).count())
                    .as("permits of edits in run %d: %s", run, five)
                    .isEqualTo(4);
        }
        assertThat(order.subList(50, 80)).containsOnly("catalogue");
    }

    @Test
    void unnamedProducersWeighOneAndTheDefaultProducerIsOneOfThem() {
        List<String> order = producerOrder(
                ProducerWeights.parse("big=2"), concat(calls("x", 10), concat(calls("big", 10), calls("default", 10))));

        // Per turn of four: big 2, x 1, default 1.
        List<String> whileAllWait = order.subList(0, 12);
        assertThat(whileAllWait.stream().filter("big"::equals).count()).isEqualTo(6);
        assertThat(whileAllWait.stream().filter("x"::equals).count()).isEqualTo(3);
        assertThat(whileAllWait.stream().filter("default"::equals).count()).isEqualTo(3);
    }

    @Test
    void producersShareWithinEachLaneAndThePriorityLaneStillComesFirst() {
        Queue<String> queue = new Queue<>(new ConcurrencyLimiter(1, 1, 0));
        for (int i = 0; i < 3; i++) {
            queue.call(Lane.NORMAL, "a", "Na");
        }
        queue.call(Lane.NORMAL, "b", "Nb");
        for (int i = 0; i < 2; i++) {
            queue.call(Lane.PRIORITY, "a", "Pa");
        }
        queue.call(Lane.PRIORITY, "b", "Pb");
        queue.releaseOneAtATime(7);

        assertThat(queue.started).containsExactly("Pa", "Pb", "Pa", "Na", "Nb", "Na", "Na");
    }

    @Test
    void aCancelledCallLeavesItsProducersTurnsAndQueueAndKeepsNoPermit() {
        Queue<String> queue = new Queue<>(new ConcurrencyLimiter(1, 1, 0));
        ConcurrencyLimiter limiter = queue.limiter;
        List<Cancellable> ofA = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ofA.add(queue.call(Lane.NORMAL, "a", "a"));
        }
        queue.call(Lane.NORMAL, "b", "b");
        assertThat(limiter.waiting("a")).isEqualTo(3);

        ofA.forEach(Cancellable::cancel);

        assertThat(limiter.waiting("a")).isZero();
        assertThat(limiter.waiting()).isEqualTo(1);
        queue.pending.emitters.get(0).complete("done");
        assertThat(queue.started).containsExactly("b");
        queue.pending.emitters.get(1).complete("done");
        assertThat(limiter.inFlight()).isZero();
        assertThat(limiter.waiting()).isZero();
    }

    @Test
    void aPermitGivenToACallerOfAnotherProducerThatCancelsAtThatMomentGoesBack() throws Exception {
        // The race above, with the call in flight and the waiting one of different producers, and a third producer
        // waiting behind: whoever ends the run first gives the permit back, and it reaches the third.
        raceACancelAgainstTheGrant(new ConcurrencyLimiter(1, 1, 0, ProducerWeights.parse("b=3")), "a", "b", "c");
    }

    @Test
    void aHeldProducersWaitersGetNoPermitButOneGivenBackAsideIsTakenAgainFirst() {
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 1);
        Set<String> held = ConcurrentHashMap.newKeySet();
        limiter.holdWhile(held::contains);
        List<String> order = new ArrayList<>();
        List<UniEmitter<? super String>> running = new ArrayList<>();
        List<UniEmitter<? super String>> asideWaits = new ArrayList<>();
        limiter.<String>run(Lane.NORMAL, "a", turn -> {
                    order.add("a-first");
                    return turn.aside(Uni.createFrom().<String>emitter(asideWaits::add))
                            .invoke(() -> order.add("a-first back"))
                            .chain(() -> Uni.createFrom().<String>emitter(running::add));
                })
                .subscribe()
                .with(ignored -> {});
        Supplier<Uni<String>> work = () -> Uni.createFrom().emitter(running::add);
        limiter.run(Lane.NORMAL, "b", () -> {
                    order.add("b");
                    return work.get();
                })
                .subscribe()
                .with(ignored -> {});
        assertThat(order).as("a gave its permit back while aside: b has it").containsExactly("a-first", "b");

        // a is now over its cap: its new work waits, but the one aside has its place already and takes it back.
        held.add("a");
        limiter.run(Lane.NORMAL, "a", () -> {
                    order.add("a-second");
                    return work.get();
                })
                .subscribe()
                .with(ignored -> {});
        asideWaits.get(0).complete("placed");
        running.get(0).complete("b done");
        assertThat(order).containsExactly("a-first", "b", "a-first back");

        running.get(1).complete("a-first done");
        assertThat(limiter.inFlight()).as("a-second waits while a is held").isZero();
        held.remove("a");
        limiter.recheck();
        assertThat(order).containsExactly("a-first", "b", "a-first back", "a-second");
        assertThat(limiter.inFlight()).isEqualTo(1);
    }
}
