package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.SharedServersFirst;
import io.imageworker.testing.launch.TakesAbout;
import io.imageworker.testing.launch.WorkerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One spend budget for the fleet: two packaged workers in one consumer group, sharing the budget topic, together
 * make no more billable calls than the cap allows, although each alone would be allowed the whole cap; and a worker
 * started afterwards, a new life on the same topic, finds the window's count and makes none. The budget topic holds
 * records nobody in the fleet wrote from the start (issue 29: a claim without its claim, a record that is no JSON):
 * each worker skips and counts them, and spends its cap all the same, the later one too.
 */
@ExtendWith(SharedServersFirst.class)
@TakesAbout(seconds = 52)
class FleetBudgetIT {

    private static final int WORKERS = 2;
    private static final int CONCURRENCY = 2;
    private static final int CAP = 5;
    private static final int REQUESTS = WORKERS * CAP;
    private static final Duration WITHIN = Duration.ofSeconds(90);
    private static final String SKIPPED = "image_worker_side_topic_records_skipped_total";
    private static final double FORGED = 2;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void twoWorkersSharingOneBudgetMakeNoMoreCallsThanItAllowsAndARestartKeepsTheCount() throws Exception {
        try (LaunchStack stack = LaunchStack.onSharedServers(Latency.fixed(Duration.ofMillis(500)));
                PipelineClient client = PipelineClient.on(stack)) {
            Map<String, String> budget = Map.of(
                    "IMAGE_WORKER_BUDGET_MAX_CALLS", Integer.toString(CAP),
                    "IMAGE_WORKER_BUDGET_WINDOW", windowWithTimeLeft(Duration.ofMinutes(5)),
                    "IMAGE_WORKER_BUDGET_ON_EXCEEDED", "fail");
            // Before any worker reads it: records that cannot be applied, as anyone who may write the topic can.
            stack.infrastructure().kafka().createTopics(1, stack.topics().budget());
            CompletableFuture.allOf(
                            client.sendAsync(stack.topics().budget(), "forged-1", "{\"kind\":\"CLAIM\"}"),
                            client.sendAsync(stack.topics().budget(), "forged-2", "not a claim"))
                    .get(30, TimeUnit.SECONDS);
            List<WorkerProcess> workers = new ArrayList<>();
            try {
                for (int i = 1; i <= WORKERS; i++) {
                    workers.add(worker(stack, "fleet-worker-" + i, budget));
                }
                // Started side by side, each ready before the first request is published.
                WorkerProcess.together(workers, WorkerProcess::start);
                List<String> ids = publish(stack, client, "fleet", REQUESTS);
                client.awaitEnded(ids, WITHIN);

                assertThat(stack.gateway().imageCalls())
                        .as("gateway calls of the fleet")
                        .hasSize(CAP);
                Map<String, Long> outcomes = outcomes(client, ids);
                assertThat(outcomes).containsEntry("completed", (long) CAP);
                assertThat(outcomes).containsEntry("BUDGET_EXCEEDED", (long) (REQUESTS - CAP));
                // Each worker took part (one partition each) and counts the fleet's calls, not its own.
                assertThat(workers).allSatisfy(worker -> {
                    assertThat(worker.metric("image_worker_requests_total").orElse(0))
                            .as("requests ended by %s", worker.logFile())
                            .isPositive();
                    assertThat(worker.metric("image_worker_budget_used_calls")).hasValue(CAP);
                    assertThat(worker.metric(SKIPPED))
                            .as("forged records skipped")
                            .hasValue(FORGED);
                });
            } finally {
                WorkerProcess.together(workers, WorkerProcess::stop);
            }

            try (WorkerProcess later =
                    worker(stack, "fleet-worker-later", budget).start()) {
                List<String> more = publish(stack, client, "after-restart", WORKERS);
                client.awaitEnded(more, WITHIN);

                assertThat(outcomes(client, more)).containsOnly(Map.entry("BUDGET_EXCEEDED", (long) WORKERS));
                assertThat(stack.gateway().imageCalls())
                        .as("gateway calls of the fleet")
                        .hasSize(CAP);
                assertThat(later.metric("image_worker_budget_used_calls")).hasValue(CAP);
                assertThat(later.metric(SKIPPED)).as("forged records skipped").hasValue(FORGED);
            }
        }
    }

    /**
     * A window length whose current window (windows are aligned on the epoch) has at least {@code left} to run, so
     * that the whole test falls in one: a day, or a few hours more.
     */
    private static String windowWithTimeLeft(Duration left) {
        long now = System.currentTimeMillis();
        for (Duration window = Duration.ofHours(24); ; window = window.plusHours(1)) {
            if (window.toMillis() - now % window.toMillis() > left.toMillis()) {
                return window.toMinutes() + "m";
            }
        }
    }

    private static WorkerProcess worker(LaunchStack stack, String name, Map<String, String> budget) {
        return stack.worker(name, CONCURRENCY).env(budget).smallJvm().build();
    }

    /** Publishes {@code count} requests, on every partition in turn: every worker gets its share. */
    private static List<String> publish(LaunchStack stack, PipelineClient client, String prefix, int count) {
        return client.publishOnEveryPartition(
                prefix,
                count,
                stack.infrastructure().kafka().partitions(),
                id -> PipelineClient.request(id, "a paper boat"));
    }

    /**
     * How the requests ended: {@code completed}, or the error code. A request may have a repeated event (a worker
     * joining the group moves a partition before its last commit; the next one replays the recorded result), never a
     * different one.
     */
    private static Map<String, Long> outcomes(PipelineClient client, List<String> ids) {
        Map<String, List<String>> byRequest = client.results().stream()
                .filter(result -> ids.contains(result.requestId()))
                .collect(Collectors.groupingBy(
                        PipelineClient.Result::requestId,
                        Collectors.mapping(
                                result -> result.completed() ? "completed" : result.errorCode(), Collectors.toList())));
        assertThat(byRequest).hasSize(ids.size());
        assertThat(byRequest).allSatisfy((id, ends) -> assertThat(ends).as(id).containsOnly(ends.get(0)));
        return byRequest.values().stream().collect(Collectors.groupingBy(ends -> ends.get(0), Collectors.counting()));
    }
}
