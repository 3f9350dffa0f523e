package io.imageworker.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.TestConfig;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CpuWorkTest {

    private final WorkerThreads threads = new WorkerThreads();
    private final CpuWork cpu = new CpuWork(threads, 2, 4);

    @AfterEach
    void close() {
        threads.stopAll();
    }

    @Test
    void runsWorkOnThePoolNotOnTheCallersThread() {
        String thread = cpu.run(() -> Thread.currentThread().getName()).await().atMost(Duration.ofSeconds(10));

        assertThat(thread)
                .startsWith("image-worker-cpu-")
                .isNotEqualTo(Thread.currentThread().getName());
    }

    @Test
    void workAskedForFromThePoolRunsAtOnceOnTheSameThreadInsteadOfQueueingAgain() {
        String[] threads = cpu.run(() -> Thread.currentThread().getName())
                .chain(first -> cpu.run(
                        () -> new String[] {first, Thread.currentThread().getName()}))
                .await()
                .atMost(Duration.ofSeconds(10));

        assertThat(threads[1]).isEqualTo(threads[0]);
    }

    @Test
    void theQueueHoldsEveryRecordTakenAtOnceTheParkedTopicsToo() {
        int queue = CpuWork.queueFor(TestConfig.worker(Map.of(
                "image-worker.max-in-progress", "3",
                "image-worker.read-ahead", "5",
                "image-worker.park-after", "7")));

        // Two lanes of 3 in progress and 5 read ahead, and 7 records of the parked topic.
        assertThat(queue).isEqualTo(2 * (3 + 5) + 7);
    }
}
