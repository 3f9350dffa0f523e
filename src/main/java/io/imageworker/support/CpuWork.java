package io.imageworker.support;

import io.imageworker.config.WorkerConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.function.Supplier;

/**
 * The CPU work of requests, off the event loops: reading a record, reading a gateway answer's JSON and base64,
 * hashing and inspecting images. An event loop only does I/O; a step that spends CPU in proportion to a payload runs
 * here.
 *
 * <p>A fixed number of threads ({@code cpu-threads}, by default the processors the JVM sees: more would only take
 * turns on the same cores), so threads do not grow with the concurrency. The queue holds at most the records the
 * worker takes at once ({@code max-in-progress} plus {@code read-ahead} for each lane, and {@code park-after} from the
 * parked topic): a record has at most one task here at a time, so the queue cannot overflow; if it ever did, the task fails (its request ends as a defect) rather than run on the
 * caller's event loop. The pool is made and stopped by {@link WorkerThreads}.
 */
@ApplicationScoped
public class CpuWork {

    private final ThreadPoolExecutor executor;

    @Inject
    CpuWork(WorkerConfig config, WorkerThreads threads, MeterRegistry registry) {
        this(
                threads,
                Math.max(1, config.cpuThreads().orElse(Runtime.getRuntime().availableProcessors())),
                queueFor(config));
        WorkerMetrics.gauge(
                        "image_worker_cpu_tasks_waiting",
                        executor,
                        pool -> pool.getQueue().size(),
                        "Tasks waiting for a thread of the CPU pool")
                .register(registry);
    }

    /**
     * The records taken from Kafka at once, each with at most one task here at a time: both lanes' (in progress and
     * read ahead) and the parked topic's, which is read beside the normal lane with a bound of its own.
     */
    static int queueFor(WorkerConfig config) {
        return 2 * config.intakeLimit() + config.parkAfterLimit();
    }

    /** A pool of {@code count} threads, made by {@code threads}, holding at most {@code queued} tasks beyond them. */
    public CpuWork(WorkerThreads threads, int count, int queued) {
        this.executor = threads.cpuPool(count, queued);
        Log.debugf("CPU work on %d thread(s)", count);
    }

    /**
     * {@code work}, run on the pool; the returned {@code Uni} goes on on the pool's thread. Called from a thread of the
     * pool (a chain that already goes on there, such as an answer just decoded and now inspected and hashed), it runs
     * at once on that thread: queued again, the bytes it works on would wait in memory behind other requests' tasks.
     */
    public <T> Uni<T> run(Supplier<T> work) {
        if (WorkerThreads.onCpuThread()) {
            return Uni.createFrom().item(work);
        }
        return Uni.createFrom().item(work).runSubscriptionOn(executor);
    }
}
