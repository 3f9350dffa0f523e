package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.SharedServersFirst;
import io.imageworker.testing.launch.TakesAbout;
import io.imageworker.testing.launch.WorkerProcess;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Pauses by design that outlast SmallRye's {@code throttled.unprocessed-record-max-age.ms} many times over keep the
 * packaged worker healthy and lose nothing: liveness stays up all along, readiness is down and says why, the worker is
 * never restarted and no request fails; when the pause ends every request completes. Scaled down: a max age of 8 s (20
 * minutes in production; 4 s until November 2026 failed a loaded full run: a record's time before the pause, the cold
 * worker's first records on a machine running three test JVMs, plus its time after the resume passed it; the time
 * outside a pause counts, by design, or a pause would hide a record stuck before it) against a pause three times as
 * long (a weekend's dead token is thousands of times as long).
 * SmallRye itself sees the records wait longer than the max age (its warning is in the worker's log): with its plain
 * {@code throttled} strategy the consumer would be closed and liveness would go down at the first age check past the
 * max age, and SmallRye checks every half second here ({@code auto.commit.interval.ms}), so the 16 s of the pause past
 * the max age are some 32 checks that would each fail it; five times the max age (until November 2026) proved no more
 * and took 16 s longer. The max age cannot be shorter: the start-up check wants it longer than the request deadline
 * and the infrastructure patience together (3 s).
 */
@ExtendWith(SharedServersFirst.class)
@TakesAbout(seconds = 126)
class LongPauseIT {

    private static final int CONCURRENCY = 2;
    private static final int REQUESTS = 6;
    private static final Duration MAX_AGE = Duration.ofSeconds(8);
    private static final Duration PAUSE = MAX_AGE.multipliedBy(3);
    private static final Duration WITHIN = Duration.ofSeconds(60);
    /** SmallRye's warning that a record has waited longer than the max age. */
    private static final String WAITED_TOO_LONG = "SRMSG18231";

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aDeadTokenForThreeTimesTheMaxAgeRestartsNothingAndFailsNothing() throws Exception {
        try (LaunchStack stack = LaunchStack.onSharedServers(Latency.fixed(Duration.ofMillis(300)));
                WorkerProcess worker = worker(stack, "long-pause-worker", Map.of());
                PipelineClient client = PipelineClient.on(stack)) {
            worker.start();
            // A token dies under a worker that runs: its first requests' cold path (the transactional producers, each
            // partition's first record, code not yet compiled) took 2.4 s of a loaded machine before the first call
            // (November 2026), counted against the max age as it is no pause, and with the time after the resume it
            // passed 4 s. Warmed up, a record's time outside the pause is its call and its commit.
            everyRequestCompletes(client, publish(client, "warm-up"));
            stack.gateway().control().revokeToken();
            List<String> ids = publish(client, "dead-token");

            await("intake paused on the dead token")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> worker.metric("image_worker_intake_paused").orElse(0) == 1);
            holdsThePauseHealthily(worker, "\"pausedBy\"");
            stack.gateway().control().restoreToken();

            everyRequestCompletes(client, ids);
            assertThat(worker.starts()).as("worker starts").isEqualTo(1);
            assertThat(worker.isAlive()).isTrue();
            assertThat(log(worker)).contains(WAITED_TOO_LONG);
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aSpendGuardHoldingRequestsForThreeTimesTheMaxAgeRestartsNothingAndFailsNothing() throws Exception {
        // Windows are aligned on the epoch: the requests must start early enough in one for the pause to last PAUSE,
        // with 12 s to spare for publishing them and seeing half of them held (5 s to spare failed on a machine at a
        // load of 20 to 50: the window ended during the pause). Once the servers are up, the window's length is chosen
        // so that one starts about when the worker is ready (its start took 4 to 14 s here), with 10 s of slack for a
        // later one; the test waits for the start of that window and then for its end, which releases the requests
        // held. A worker later still waits for the next window.
        Duration needed = PAUSE.plusSeconds(12);
        try (LaunchStack stack = LaunchStack.onSharedServers(Latency.fixed(Duration.ofMillis(300)));
                PipelineClient client = PipelineClient.on(stack)) {
            Duration window = windowStartingIn(Duration.ofSeconds(12), needed.plusSeconds(10));
            WorkerProcess worker = worker(
                    stack,
                    "budget-pause-worker",
                    Map.of(
                            "IMAGE_WORKER_BUDGET_MAX_CALLS",
                            Integer.toString(REQUESTS / 2),
                            "IMAGE_WORKER_BUDGET_WINDOW",
                            window.toMillis() + "ms",
                            "IMAGE_WORKER_BUDGET_ON_EXCEEDED",
                            "pause"));
            try (worker) {
                worker.start();
                await("a window with " + needed + " left")
                        .atMost(window.plusSeconds(12))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() ->
                                window.toMillis() - System.currentTimeMillis() % window.toMillis() > needed.toMillis());
                overBudgetRequestsWaitOutThePause(stack, client, worker);
            }
        }
    }

    private static void overBudgetRequestsWaitOutThePause(
            LaunchStack stack, PipelineClient client, WorkerProcess worker) throws Exception {
        List<String> ids = publish(client, "over-budget");

        await("half the requests held by the spend guard")
                .atMost(WITHIN)
                .pollInterval(Duration.ofMillis(100))
                .until(() -> worker.metric("image_worker_budget_held_requests").orElse(0) == REQUESTS / 2);
        holdsThePauseHealthily(worker, "\"heldBySpendGuard\"");
        assertThat(worker.metric("image_worker_budget_held_requests"))
                .as("still held at the end of the pause")
                .hasValue(REQUESTS / 2);

        everyRequestCompletes(client, ids);
        assertThat(stack.gateway().imageCalls()).hasSize(REQUESTS);
        assertThat(worker.starts()).as("worker starts").isEqualTo(1);
        assertThat(worker.isAlive()).isTrue();
        assertThat(log(worker)).contains(WAITED_TOO_LONG);
    }

    /**
     * A budget window at least {@code least} long of which one starts {@code in} from now, within half a second:
     * windows are aligned on the epoch, so a length among the next 20,000 milliseconds' puts a boundary there.
     */
    static Duration windowStartingIn(Duration in, Duration least) {
        long at = System.currentTimeMillis() + in.toMillis();
        for (long length = least.toMillis(); length < least.toMillis() + 20_000; length++) {
            if (at % length < 500) {
                return Duration.ofMillis(length);
            }
        }
        return least;
    }

    /**
     * Readiness down with the reason (the intake check's data names {@code reasonKey}), then liveness up for the whole
     * pause.
     */
    static void holdsThePauseHealthily(WorkerProcess worker, String reasonKey) {
        WorkerProcess.Health ready = worker.health("ready");
        assertThat(ready.status()).as("readiness during the pause").isEqualTo(503);
        assertThat(ready.body()).contains(reasonKey, "\"reason\"");
        await("liveness up for the whole pause of " + PAUSE)
                .during(PAUSE)
                .atMost(PAUSE.plusSeconds(10))
                .pollInterval(Duration.ofMillis(250))
                .until(worker::isLive);
        assertThat(worker.isAlive()).isTrue();
    }

    static void everyRequestCompletes(PipelineClient client, List<String> ids) {
        client.awaitEnded(ids, WITHIN);
        List<PipelineClient.Result> results = client.results().stream()
                .filter(result -> ids.contains(result.requestId()))
                .toList();
        assertThat(results).allSatisfy(result -> assertThat(result.completed())
                .as("%s ended with %s", result.requestId(), result.body())
                .isTrue());
        assertThat(results.stream().map(PipelineClient.Result::requestId).collect(Collectors.toSet()))
                .hasSize(ids.size());
    }

    static WorkerProcess worker(LaunchStack stack, String name, Map<String, String> env) {
        return stack.worker(name, CONCURRENCY)
                .env("IMAGE_WORKER_GATEWAY_PROBE_INTERVAL", "500ms")
                .env("IMAGE_WORKER_RETRY_INITIAL_BACKOFF", "100ms")
                .env("IMAGE_WORKER_RETRY_MAX_BACKOFF", "500ms")
                // The start-up check wants the max age longer than these two together.
                .env("IMAGE_WORKER_RETRY_REQUEST_DEADLINE", "2s")
                .env("IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE", "1s")
                .env(env)
                .smallJvm()
                .jvmOptions(List.of(
                        "-Dmp.messaging.incoming.requests.throttled.unprocessed-record-max-age.ms="
                                + MAX_AGE.toMillis(),
                        // SmallRye checks the ages when it commits: every half second instead of every 5 s.
                        "-Dmp.messaging.incoming.requests.auto.commit.interval.ms=500"))
                .build();
    }

    /** Publishes the requests, keyed by their ids, and waits for the broker's acknowledgements. */
    static List<String> publish(PipelineClient client, String prefix) {
        return List.copyOf(client.publish(prefix, REQUESTS, id -> PipelineClient.request(id, "a lighthouse at dusk"))
                .keySet());
    }

    static String log(WorkerProcess worker) throws Exception {
        try (Stream<String> lines = Files.lines(worker.logFile())) {
            return lines.filter(line -> !line.startsWith("====")).collect(Collectors.joining("\n"));
        }
    }
}
