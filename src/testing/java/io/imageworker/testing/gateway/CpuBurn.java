package io.imageworker.testing.gateway;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;

/** Spends CPU time on the calling thread, as a real gateway spends it rendering an image. */
final class CpuBurn {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static volatile long sink;

    private CpuBurn() {}

    /** Returns once this thread has used {@code cpu} of CPU time (not wall time: a busy machine takes longer). */
    static void spend(Duration cpu) {
        if (cpu.isZero()) {
            return;
        }
        long until = THREADS.getCurrentThreadCpuTime() + cpu.toNanos();
        long x = sink;
        while (THREADS.getCurrentThreadCpuTime() < until) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink = x;
    }
}
