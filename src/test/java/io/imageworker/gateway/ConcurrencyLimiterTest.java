package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.imageworker.Lane;
import io.imageworker.config.ProducerWeights;
import io.smallrye.mutiny.Uni;
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
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 1, minShare);
        Pending pending = new Pending();
        List<Lane> started = new ArrayList<>();
        limiter.run(pending::work).subscribe().with(x -> {});
        queue(limiter, Lane.NORMAL, normalWaiting, pending, started);
        queue(limiter, Lane.PRIORITY, priorityWaiting, pending, started);
        assertThat(limiter.waiting(Lane.NORMAL)).isEqualTo(normalWaiting);
        assertThat(limiter.waiting(Lane.PRIORITY)).isEqualTo(priorityWaiting);
        for (int i = 0; i < normalWaiting + priorityWaiting; i++) {
            pending.emitters.get(i).complete("done");
            assertThat(started).hasSize(i + 1);
        }
        return started;
    }

    /** {@code calls} calls of {@code lane}, each noting its lane in {@code started} when it gets its permit. */
    private static void queue(ConcurrencyLimiter limiter, Lane lane, int calls, Pending pending, List<Lane> started) {
        for (int i = 0; i < calls; i++) {
            limiter.run(lane, () -> {
                        started.add(lane);
                        return pending.work();
                    })
                    .subscribe()
                    .with(x -> {});
        }
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
                io.smallrye.mutiny.subscription.Cancellable waiting = limiter.run(
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
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 1, 0, weights);
        Pending pending = new Pending();
        List<String> started = new ArrayList<>();
        limiter.run(pending::work).subscribe().with(x -> {});
        for (String producer : arrivals) {
            limiter.run(Lane.NORMAL, producer, () -> {
                        started.add(producer);
                        return pending.work();
                    })
                    .subscribe()
                    .with(x -> {});
        }
        assertThat(limiter.waiting()).isEqualTo(arrivals.size());
        for (int i = 0; i < arrivals.size(); i++) {
            pending.emitters.get(i).complete("done");
            assertThat(started).hasSize(i + 1);
        }
        assertThat(limiter.waiting()).isZero();
        return started;
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
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 1, 0, ProducerWeights.parse("solo=1,other=9"));
        Pending pending = new Pending();
        List<Integer> started = new ArrayList<>();
        limiter.run(pending::work).subscribe().with(x -> {});
        for (int i = 0; i < 20; i++) {
            int number = i;
            limiter.run(Lane.NORMAL, "solo", () -> {
                        started.add(number);
                        return pending.work();
                    })
                    .subscribe()
                    .with(x -> {});
        }
        assertThat(limiter.waiting("solo")).isEqualTo(20);
        for (int i = 0; i < 20; i++) {
            pending.emitters.get(i).complete("done");
        }

        assertThat(started)
                .containsExactlyElementsOf(
                        java.util.stream.IntStream.range(0, 20).boxed().toList());
        assertThat(limiter.waiting("solo")).isZero();
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
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 1, 0);
        Pending pending = new Pending();
        List<String> started = new ArrayList<>();
        limiter.run(pending::work).subscribe().with(x -> {});
        java.util.function.BiConsumer<Lane, String> call = (lane, producer) -> limiter.run(lane, producer, () -> {
                    started.add(lane.name().charAt(0) + producer);
                    return pending.work();
                })
                .subscribe()
                .with(x -> {});
        for (int i = 0; i < 3; i++) {
            call.accept(Lane.NORMAL, "a");
        }
        call.accept(Lane.NORMAL, "b");
        for (int i = 0; i < 2; i++) {
            call.accept(Lane.PRIORITY, "a");
        }
        call.accept(Lane.PRIORITY, "b");
        for (int i = 0; i < 7; i++) {
            pending.emitters.get(i).complete("done");
        }

        assertThat(started).containsExactly("Pa", "Pb", "Pa", "Na", "Nb", "Na", "Na");
    }

    @Test
    void aCancelledCallLeavesItsProducersTurnsAndQueueAndKeepsNoPermit() {
        ConcurrencyLimiter limiter = new ConcurrencyLimiter(1, 1, 0);
        Pending pending = new Pending();
        List<String> started = new ArrayList<>();
        limiter.run(pending::work).subscribe().with(x -> {});
        List<io.smallrye.mutiny.subscription.Cancellable> ofA = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ofA.add(limiter.run(Lane.NORMAL, "a", () -> {
                        started.add("a");
                        return pending.work();
                    })
                    .subscribe()
                    .with(x -> {}));
        }
        limiter.run(Lane.NORMAL, "b", () -> {
                    started.add("b");
                    return pending.work();
                })
                .subscribe()
                .with(x -> {});
        assertThat(limiter.waiting("a")).isEqualTo(3);

        ofA.forEach(io.smallrye.mutiny.subscription.Cancellable::cancel);

        assertThat(limiter.waiting("a")).isZero();
        assertThat(limiter.waiting()).isEqualTo(1);
        pending.emitters.get(0).complete("done");
        assertThat(started).containsExactly("b");
        pending.emitters.get(1).complete("done");
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
