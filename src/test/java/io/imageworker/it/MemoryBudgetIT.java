package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.SharedServersFirst;
import io.imageworker.testing.launch.WorkerProcess;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The byte budget holds where the call limit alone would not: the packaged worker, a small heap, a budget smaller than
 * one answer, and answers of 2048x2048 PNGs of 6 MB as {@code b64_json} (8 MB of base64, 14 MB held with the image
 * decoded from it). With 16 calls allowed at once, 16 such answers (224 MB) do not fit in a 192 MB heap: without the
 * budget the worker ends with {@code OutOfMemoryError} ({@code -XX:+ExitOnOutOfMemoryError}). With it, each call is sent
 * alone (larger than the whole budget, it proceeds only when nothing else is held), every request completes, slower,
 * and the process never runs out of memory.
 */
@ExtendWith(SharedServersFirst.class)
class MemoryBudgetIT {

    private static final int REQUESTS = 24;
    private static final int CONCURRENCY = 16;
    private static final int IMAGE_BYTES = 6_000_000;
    private static final long BUDGET = 12L << 20;

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void answersLargerThanTheBudgetAllCompleteOneAtATimeWithoutRunningOutOfMemory() throws Exception {
        SimulatorSettings gateway = SimulatorSettings.defaults()
                .withLatency(Latency.fixed(Duration.ofMillis(50)))
                .withQuota(SimulatorSettings.UNLIMITED_QUOTA)
                .withImageBytes(IMAGE_BYTES);
        try (LaunchStack stack = LaunchStack.onSharedServers(gateway);
                WorkerProcess worker = stack.worker("memory-budget-worker", CONCURRENCY)
                        .env(Map.of("IMAGE_WORKER_MEMORY_BUDGET", Long.toString(BUDGET)))
                        .jvmOptions(List.of("-Xms64m", "-Xmx192m", "-XX:+ExitOnOutOfMemoryError"))
                        .shortConsumerSession()
                        .build();
                PipelineClient client = PipelineClient.on(stack)) {
            worker.start();
            List<String> ids = List.copyOf(client.publish(
                            "huge",
                            REQUESTS,
                            id -> PipelineClient.request(id, "a cathedral in fog", "\"size\":\"2048x2048\""))
                    .keySet());

            LongPauseIT.everyRequestCompletes(client, ids);

            assertThat(worker.isAlive()).as("the worker is alive").isTrue();
            assertThat(worker.starts()).as("worker starts").isEqualTo(1);
            assertThat(Files.readString(worker.logFile())).doesNotContain("java.lang.OutOfMemoryError");
            assertThat(stack.gateway().imageCalls()).as("one call per request").hasSize(REQUESTS);
            // Each call is larger than the budget: the gateway never sees a second one while one is held.
            assertThat(stack.gateway().maxConcurrentImageCalls())
                    .as("calls at once")
                    .isEqualTo(1);
            assertThat(worker.metric("image_worker_memory_wait_seconds_count").orElse(0))
                    .as("calls that waited for the budget")
                    .isPositive();
            assertThat(worker.metric("image_worker_memory_held_bytes")).hasValue(0.0);
            // Alone, a call holds its answer and the image decoded from it (14 MB), whatever the budget; the most held
            // is the first call's reservation, made before any answer was seen (4 x 7/3 bytes a pixel, 39 MB).
            assertThat(worker.metric("image_worker_memory_held_peak_bytes").orElse(0))
                    .isBetween(14e6, 2048.0 * 2048 * 4 * 7 / 3 + 1);
        }
    }
}
