package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.SimulatorSettings;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The byte budget holds where the call limit alone would not: the packaged worker, a small heap, a budget smaller than
 * one answer, and answers of 2048x2048 PNGs of 6 MB as {@code b64_json} (8 MB of base64, 14 MB held with the image
 * decoded from it). With 16 calls allowed at once, 16 such answers (224 MB) do not fit in a 192 MB heap: without the
 * budget the worker ends with {@code OutOfMemoryError} ({@code -XX:+ExitOnOutOfMemoryError}). With it, the calls are
 * sent together, each holding only its read window while it waits, and their answers are read one at a time (each is
 * larger than the whole budget: it is admitted only when no other answer is being read), the others paused on the
 * wire meanwhile, none failed for it; every request completes and the process never runs out of memory.
 */
@ExtendWith(SharedServersFirst.class)
@TakesAbout(seconds = 16)
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
            // A call waiting for its answer holds its read window, not its answer: the memory budget does not keep the
            // calls from the gateway (before, each waited for the last answer to be stored: one call at a time).
            assertThat(stack.gateway().maxConcurrentImageCalls())
                    .as("calls at once")
                    .isGreaterThan(1);
            assertThat(worker.metric("image_worker_memory_wait_seconds_count").orElse(0))
                    .as("answers that waited, paused, for the budget")
                    .isPositive();
            assertThat(worker.metric("image_worker_memory_held_bytes")).hasValue(0.0);
            assertThat(worker.metric("image_worker_gateway_answers_waiting_for_memory"))
                    .hasValue(0.0);
            // An answer is read alone: its body and the image decoded from it (14 MB), beside the read windows of the
            // other calls in flight (64 KiB each); never two answers at once, nor the guess of 39 MB made before.
            assertThat(worker.metric("image_worker_memory_held_peak_bytes").orElse(0))
                    .isBetween(14e6, 14e6 + CONCURRENCY * 64 * 1024 + 100_000);
        }
    }
}
