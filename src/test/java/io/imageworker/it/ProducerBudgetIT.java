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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue #21's per-producer budget across a fleet: two packaged workers in one consumer group, sharing the budget
 * topic, producer A capped at a few calls per window, B not. A's backlog and then B's requests fall on every
 * partition: together the workers make no more of A's calls than its cap (counted at the gateway), although each
 * alone would be allowed the whole cap, and A's other requests wait (pause, the default) while every request of B
 * completes; and A's requests left waiting do not hold up the workers' graceful stop.
 */
@ExtendWith(SharedServersFirst.class)
@TakesAbout(seconds = 29)
class ProducerBudgetIT {

    private static final int WORKERS = 2;
    private static final int CONCURRENCY = 2;
    private static final int CAP = 4;
    /** More of A's requests than its cap and all the places in progress of the fleet (2 x 4) together. */
    private static final int OF_A = 18;

    private static final int OF_B = 18;
    private static final Duration WITHIN = Duration.ofSeconds(60);

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void aProducersCapHoldsAcrossTwoWorkersWhileAnotherProducerCompletesAllItsRequests() {
        try (LaunchStack stack = LaunchStack.onSharedServers(Latency.fixed(Duration.ofMillis(300)));
                PipelineClient client = PipelineClient.on(stack)) {
            // One window of ten years (aligned on the epoch, the current one runs to December 2029): no window
            // boundary falls inside the test.
            Map<String, String> budget = Map.of("IMAGE_WORKER_BUDGET_PER_PRODUCER", "a=" + CAP + "/3650d");
            List<WorkerProcess> workers = new ArrayList<>();
            try {
                for (int i = 1; i <= WORKERS; i++) {
                    workers.add(stack.worker("producer-budget-worker-" + i, CONCURRENCY)
                            .env(budget)
                            .smallJvm()
                            .build());
                }
                WorkerProcess.together(workers, WorkerProcess::start);
                List<String> ofA = publish(stack, client, "a", OF_A);
                List<String> ofB = publish(stack, client, "b", OF_B);

                client.awaitEnded(ofB, WITHIN);
                assertThat(client.firstEvents(ofB).values())
                        .as("B's requests")
                        .allSatisfy(event -> assertThat(event.completed()).isTrue());

                // Every worker has read A's claims: each reports the fleet's count of A's calls, and together they hold
                // all of A's other requests (a few more when records A's requests came in again after a rebalance: an
                // outcome already recorded is replayed only in A's turn too).
                await().atMost(WITHIN)
                        .until(() -> workers.stream()
                                        .allMatch(worker -> worker.metric("image_worker_budget_producer_used_calls")
                                                        .orElse(-1)
                                                == CAP)
                                && workers.stream()
                                                .mapToDouble(worker -> worker.metric(
                                                                "image_worker_budget_producer_held_requests")
                                                        .orElse(0))
                                                .sum()
                                        >= OF_A - CAP);
                List<RecordedCall> callsOfA = stack.callsByRequest(ofA).values().stream()
                        .flatMap(List::stream)
                        .toList();
                assertThat(callsOfA)
                        .as("gateway calls of A's requests, all workers together")
                        .hasSize(CAP);
                assertThat(stack.callsByRequest(ofB).values().stream()
                                .mapToInt(List::size)
                                .sum())
                        .as("gateway calls of B's requests")
                        .isEqualTo(OF_B);
                await().atMost(WITHIN).until(() -> client.firstEvents(ofA).size() == CAP);
                assertThat(client.firstEvents(ofA).values())
                        .as("A's requests that ended: those its cap allowed")
                        .allSatisfy(event -> assertThat(event.completed()).isTrue());
                // Each worker took part: its share of B's requests, on its partitions.
                assertThat(workers).allSatisfy(worker -> assertThat(
                                worker.metric("image_worker_requests_total").orElse(0))
                        .as("requests ended by %s", worker.logFile())
                        .isPositive());

                // A's requests left waiting, in the read-ahead or for their call, do not hold up a worker's drain:
                // they end at once, unacknowledged, for the next window's worker.
                WorkerProcess.together(workers, WorkerProcess::stop);
                assertThat(workers).allSatisfy(worker -> assertThat(worker.lastExit())
                        .as("the exit of %s", worker.logFile())
                        .hasValueSatisfying(exit -> assertThat(exit.killed()).isFalse()));
            } finally {
                WorkerProcess.together(workers, WorkerProcess::stop);
            }
        }
    }

    /** Publishes {@code count} requests of {@code producer}, on every partition in turn: every worker gets its share. */
    private static List<String> publish(LaunchStack stack, PipelineClient client, String producer, int count) {
        return client.publishOnEveryPartition(
                producer,
                count,
                stack.infrastructure().kafka().partitions(),
                id -> PipelineClient.request(id, "a paper boat", "\"producer\":\"" + producer + "\""));
    }
}
