package io.imageworker.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CpuWorkTest {

    private final CpuWork cpu = new CpuWork(2, 4);

    @AfterEach
    void close() {
        cpu.close();
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
}
