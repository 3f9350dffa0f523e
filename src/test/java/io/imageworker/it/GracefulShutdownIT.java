package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.SharedServersFirst;
import io.imageworker.testing.launch.TakesAbout;
import io.imageworker.testing.launch.WorkerProcess;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * SIGTERM to a packaged worker with gateway calls in flight: it stops taking records, starts no new call, lets the
 * calls in flight finish and their requests be stored and published within {@code IMAGE_WORKER_SHUTDOWN_GRACE},
 * commits and exits; what it did not take, did not call, or did not finish within the grace, is left uncommitted and
 * done by the next worker. Nothing is lost, nothing is called twice that had finished, nothing is failed because of
 * the shutdown; with the default grace nothing is called twice at all.
 *
 * <p>The exit status of a JVM ended by SIGTERM is 143 (128 + 15), whatever its shutdown hooks do: Quarkus runs its
 * shutdown in the JVM's hook and does not turn SIGTERM into {@code System.exit(0)}. A graceful stop is told from a
 * kill by that status (a SIGKILL gives 137) and by the exit coming within the grace by itself.
 */
@ExtendWith(SharedServersFirst.class)
@TakesAbout(seconds = 72)
class GracefulShutdownIT {

    private static final int CONCURRENCY = 4;
    private static final int SIGTERM_STATUS = 143;
    private static final Duration WITHIN = Duration.ofSeconds(60);
    /** The gateway's latency once the stop under test is over: the restarted worker's calls. */
    private static final Duration AFTER_THE_STOP = Duration.ofMillis(300);

    /**
     * The default grace against calls longer than the old one: a gateway timeout of 18 s and an infrastructure patience
     * of 15 s, so the default grace is 33 s; the old default grace was a third of the gateway timeout, 6 s here; the
     * calls take 14 s. Not to scale (in production 180 s, 2 min, 5 min, 60 s and calls of up to 110 s): the grace is
     * long beside the calls so that a drain that ends when the calls end (within 14 s) is told from one that waits the
     * grace out (33 s) by the worker's own log, with room to spare for a busy machine. The calls are long beside the
     * old grace because the SIGTERM comes only once calls are in flight and as many requests wait for a slot, which
     * takes the worker seconds (its partitions' first records come about a second apart): with calls of 4 s and an
     * old grace of 3 s, a worker that reached its first calls sooner met the SIGTERM with less than 3 s of them left.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aRolloutDuringCallsLongerThanTheOldGraceCallsNothingTwice() throws Exception {
        Duration gatewayTimeout = Duration.ofSeconds(18);
        Duration patience = Duration.ofSeconds(15);
        Duration grace = gatewayTimeout.plus(patience);
        Duration oldGrace = gatewayTimeout.dividedBy(3);
        Duration callTime = Duration.ofSeconds(14);
        try (LaunchStack stack = LaunchStack.onSharedServers(Latency.fixed(callTime));
                WorkerProcess worker = stack.worker("graceful-worker", CONCURRENCY)
                        // No IMAGE_WORKER_SHUTDOWN_GRACE: the default, derived from these two, is under test.
                        .env("IMAGE_WORKER_GATEWAY_TIMEOUT", gatewayTimeout.toMillis() + "ms")
                        .env("IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE", patience.toMillis() + "ms")
                        .smallJvm()
                        .build();
                PipelineClient client = PipelineClient.on(stack)) {
            worker.start();
            // 3 x the limit: the limit's worth in flight, as many waiting for a permit (the merge takes twice the
            // limit), and the rest not taken from the consumer yet.
            Map<String, RecordMetadata> records =
                    client.publish("graceful", 3 * CONCURRENCY, GracefulShutdownIT::request);
            List<String> ids = List.copyOf(records.keySet());
            await("calls in flight up to the limit, and as many requests waiting for a call slot")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> stack.gateway().imageCallsInFlight() == CONCURRENCY
                            && worker.metric("image_worker_gateway_calls_waiting")
                                            .orElse(0)
                                    == CONCURRENCY);
            Set<String> inFlightAtSigterm = inFlight(stack, ids);

            Instant sigterm = Instant.now();
            worker.stop();
            WorkerProcess.Exit exit = worker.lastExit().orElseThrow();

            assertThat(exit.killed())
                    .as("the worker exited by itself, not killed")
                    .isFalse();
            assertThat(exit.status())
                    .as("the exit status of a JVM ended by SIGTERM")
                    .isEqualTo(SIGTERM_STATUS);
            // It waited for the calls, longer than the old grace would have let it; its drain ended when they had
            // finished, within the default grace (derived from the timeout and the patience), not at its end. Timed
            // by the worker's own log, from the drain's start to its end: on a busy machine the JVM's exit after
            // the drain can take seconds more, which says nothing about the drain.
            assertThat(Duration.between(sigterm, exit.at())).isGreaterThan(oldGrace);
            String log = Files.readString(worker.logFile());
            assertThat(log).contains("Shutting down: waiting up to " + grace).doesNotContain("Shutdown grace over");
            assertThat(Duration.between(
                            loggedAt(log, "Shutting down: waiting up to"),
                            loggedAt(log, "Every request in progress has finished")))
                    .as("the drain, from the worker's log: over when the calls were, well within the grace")
                    .isLessThan(grace.dividedBy(2));
            assertThat(inFlightAtSigterm).hasSize(CONCURRENCY);
            // Every call in flight was let finish: its request's event was published before the worker exited.
            Map<String, PipelineClient.Result> publishedBeforeExit = client.firstEvents(ids);
            assertThat(publishedBeforeExit.keySet()).containsAll(inFlightAtSigterm);
            assertThat(publishedBeforeExit.values())
                    .allSatisfy(event -> assertThat(event.createdAt()).isBefore(exit.at()));
            // The worker started no call after SIGTERM, not even for the requests it held waiting for a call slot:
            // those, and the records it had not taken, are left for the next one. Every call it made was published.
            assertThat(publishedBeforeExit.keySet()).containsExactlyInAnyOrderElementsOf(inFlightAtSigterm);
            int callsBeforeRestart = stack.gateway().imageCalls().size();
            assertThat(callsBeforeRestart).isEqualTo(publishedBeforeExit.size());
            // And it committed what it finished before it exited: on each partition, up to its first record left
            // unfinished (requests finish out of order; a finished one behind an unfinished one waits for it).
            Map<TopicPartition, OffsetAndMetadata> committed = stack.committed();
            Map<TopicPartition, Long> firstUnfinished = new HashMap<>();
            records.forEach((id, record) -> {
                TopicPartition partition = new TopicPartition(record.topic(), record.partition());
                long end = publishedBeforeExit.containsKey(id) ? Long.MAX_VALUE : record.offset();
                firstUnfinished.merge(partition, end, Math::min);
            });
            assertThat(publishedBeforeExit.keySet()).allSatisfy(id -> {
                RecordMetadata record = records.get(id);
                TopicPartition partition = new TopicPartition(record.topic(), record.partition());
                if (firstUnfinished.get(partition) > record.offset()) {
                    OffsetAndMetadata offset = committed.get(partition);
                    assertThat(offset)
                            .as("committed offset of %s's partition", id)
                            .isNotNull();
                    assertThat(offset.offset())
                            .as("committed offset past %s", id)
                            .isGreaterThan(record.offset());
                }
            });
            assertThat(firstUnfinished).allSatisfy((partition, offset) -> {
                if (offset != Long.MAX_VALUE && committed.get(partition) != null) {
                    assertThat(committed.get(partition).offset())
                            .as("no commit past the unfinished record %s of %s", offset, partition)
                            .isLessThanOrEqualTo(offset);
                }
            });

            // The long calls were for the rollout, which is over: the next worker's calls need not take 5 s each.
            startAgainAndAwaitEvents(stack, worker, client, ids);
            await("every request record committed")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(200))
                    .until(stack::allCommitted);

            Map<String, List<PipelineClient.Result>> events = client.eventsByRequest(ids);
            Map<String, List<RecordedCall>> calls = stack.callsByRequest(ids);
            // Nothing lost, nothing failed.
            assertThat(events.keySet()).containsExactlyInAnyOrderElementsOf(ids);
            assertThat(client.results()).allSatisfy(event -> assertThat(event.completed())
                    .as("%s ended with %s", event.requestId(), event.body())
                    .isTrue());
            // Nothing done twice, nothing billed twice, nothing published twice: one gateway call and one event per
            // request. A finished request behind an unfinished one on its partition is not committed by the offset,
            // but named in the commit's metadata: the next worker acknowledges it without replaying it.
            assertThat(calls)
                    .allSatisfy((id, list) ->
                            assertThat(list).as("gateway calls for %s", id).hasSize(1));
            assertThat(events)
                    .allSatisfy((id, list) ->
                            assertThat(list).as("terminal events of %s", id).hasSize(1));
            // The second worker did only what the first had not.
            List<RecordedCall> all = stack.gateway().imageCalls();
            assertThat(PipelineClient.byRequest(all.subList(callsBeforeRestart, all.size()), ids)
                            .keySet())
                    .doesNotContainAnyElementsOf(publishedBeforeExit.keySet());
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void requestsUnfinishedWhenTheGraceEndsAreRedeliveredAndNeverFailed() throws Exception {
        Duration grace = Duration.ofSeconds(2);
        try (LaunchStack stack = LaunchStack.onSharedServers(Latency.fixed(Duration.ofSeconds(8)));
                WorkerProcess worker = worker(stack, "short-grace-worker", grace);
                PipelineClient client = PipelineClient.on(stack)) {
            worker.start();
            List<String> ids = List.copyOf(client.publish("short-grace", CONCURRENCY, GracefulShutdownIT::request)
                    .keySet());
            await("calls in flight up to the limit")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> stack.gateway().imageCallsInFlight() == CONCURRENCY);

            worker.stop();
            WorkerProcess.Exit exit = worker.lastExit().orElseThrow();

            assertThat(exit.killed()).isFalse();
            assertThat(exit.status()).isEqualTo(SIGTERM_STATUS);
            // The drain gave up at the grace, not at the end of the 8 s calls: the worker's log says which (a JVM's
            // exit can take seconds on a busy machine, so the time to exit would not).
            assertThat(Files.readString(worker.logFile()))
                    .contains("Shutting down: waiting up to " + grace)
                    .contains("Shutdown grace over: " + CONCURRENCY + " request(s) did not finish");
            // The unfinished requests were neither completed nor failed by the worker that gave up on them: no event,
            // and no result document that the next worker would replay as their outcome.
            assertThat(client.results()).isEmpty();
            assertThat(ids).allSatisfy(id -> assertThat(stack.hasObject("results/" + id + ".json"))
                    .as("a result document for %s", id)
                    .isFalse());

            // The 8 s calls were to outlast the grace; the calls made again after the restart need not.
            startAgainAndAwaitEvents(stack, worker, client, ids);

            Map<String, List<PipelineClient.Result>> events = client.eventsByRequest(ids);
            assertThat(events).allSatisfy((id, list) -> assertThat(list)
                    .as("terminal events of %s", id)
                    .singleElement()
                    .satisfies(event -> assertThat(event.completed()).isTrue()));
            // Redelivered and called again: the first call was cut off at the end of the grace.
            assertThat(stack.callsByRequest(ids)).allSatisfy((id, list) -> assertThat(list)
                    .as("gateway calls for %s", id)
                    .hasSize(2)
                    .first()
                    .satisfies(cut -> assertThat(cut.status()).isZero()));
        }
    }

    private static WorkerProcess worker(LaunchStack stack, String name, Duration grace) {
        return stack.worker(name, CONCURRENCY)
                .env("IMAGE_WORKER_SHUTDOWN_GRACE", grace.toMillis() + "ms")
                .smallJvm()
                .build();
    }

    private static String request(String id) {
        return PipelineClient.request(id, "a quiet harbour");
    }

    /** The requests whose gateway call is in flight now. */
    private static Set<String> inFlight(LaunchStack stack, List<String> ids) {
        return stack.gateway().imageCalls().stream()
                .filter(call -> call.finishedAt() == null)
                .map(call -> PipelineClient.requestOf(call, Set.copyOf(ids)))
                .filter(id -> id != null)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Starts {@code worker} again on a gateway that answers in {@link #AFTER_THE_STOP}, until each request has ended. */
    private static void startAgainAndAwaitEvents(
            LaunchStack stack, WorkerProcess worker, PipelineClient client, List<String> ids) {
        stack.gateway().control().setLatency(AFTER_THE_STOP);
        worker.start();
        await("a terminal event for each request")
                .atMost(WITHIN)
                .pollInterval(Duration.ofMillis(100))
                .until(() -> client.firstEvents(ids).size() == ids.size());
    }

    /** When the worker logged the first line containing {@code text} (its log lines start with an ISO instant). */
    private static Instant loggedAt(String log, String text) {
        return log.lines()
                .filter(line -> line.contains(text))
                .findFirst()
                .map(line -> Instant.parse(line.substring(0, line.indexOf(' '))))
                .orElseThrow(() -> new AssertionError("the worker logged no line with: " + text));
    }
}
