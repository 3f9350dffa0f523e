package io.imageworker.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class WorkerThreadsTest {

    /** A class loader of its own, so that the owner's and the starting thread's loaders tell apart. */
    private static final ClassLoader APPLICATION =
            new URLClassLoader(new URL[0], WorkerThreadsTest.class.getClassLoader());

    private final WorkerThreads threads = new WorkerThreads();

    @AfterEach
    void stop() {
        threads.stopAll();
    }

    @Test
    void aPoolThreadCarriesTheClassLoaderOfItsMakingWhicheverThreadStartsIt() throws Exception {
        ExecutorService pool = underLoader(APPLICATION, () -> threads.s3Completions(1));
        AtomicReference<ClassLoader> seen = new AtomicReference<>();
        AtomicReference<String> name = new AtomicReference<>();
        // The first task, which starts the pool's thread, comes from a thread with the system class loader, as the S3
        // client's native event loops do.
        Thread foreign = new Thread(() -> pool.execute(() -> {
            seen.set(Thread.currentThread().getContextClassLoader());
            name.set(Thread.currentThread().getName());
        }));
        foreign.setContextClassLoader(ClassLoader.getSystemClassLoader());
        foreign.start();
        foreign.join();
        threads.stop(pool);
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

        assertThat(seen.get()).isSameAs(APPLICATION);
        assertThat(name.get()).isEqualTo("s3-completion-1");
    }

    @Test
    void aReadersThreadIsANamedDaemonWithTheClassLoaderOfItsMaking() {
        Reader reader = new Reader(new CopyOnWriteArrayList<>());
        Thread thread = underLoader(APPLICATION, () -> threads.startReader("test-reader", reader::read, reader::stop));

        assertThat(thread.isDaemon()).isTrue();
        assertThat(thread.getName()).isEqualTo("test-reader");
        assertThat(thread.getContextClassLoader()).isSameAs(APPLICATION);
    }

    /**
     * Once the Kafka connector has closed its clients, the readers stop, then each transactions' thread runs its last
     * work (on that thread) and stops; the pools stop only with the owner, after them, the CPU pool last.
     */
    @Test
    void theReadersStopThenTheTransactionsEndTheirWorkThenThePoolsStop() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        ThreadPoolExecutor cpu = threads.cpuPool(1, 1);
        ExecutorService completions = threads.s3Completions(1);
        AtomicReference<ScheduledExecutorService> transactions = new AtomicReference<>();
        transactions.set(threads.transactionsOf(
                "requests",
                () -> events.add("last work on " + Thread.currentThread().getName() + ", readers stopped: "
                        + events.contains("reader stopped"))));
        Reader reader = new Reader(events);
        Thread thread = threads.startReader("test-reader", reader::read, reader::stop);

        threads.kafkaClosed(null);

        assertThat(events)
                .containsExactly(
                        "reader stopped", "last work on image-worker-transactions-requests, readers stopped: true");
        thread.join(10_000);
        assertThat(thread.isAlive()).isFalse();
        assertThat(transactions.get().awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        assertThat(cpu.isShutdown()).isFalse();
        assertThat(completions.isShutdown()).isFalse();

        threads.stopAll();

        assertThat(events).hasSize(2);
        assertThat(completions.isShutdown()).isTrue();
        assertThat(cpu.isShutdown()).isTrue();
    }

    /** A transactions' thread its owner stopped first runs its last work once, not again at shutdown. */
    @Test
    void aTransactionsThreadStoppedByItsOwnerIsNotStoppedAgain() {
        List<String> events = new CopyOnWriteArrayList<>();
        ScheduledExecutorService transactions = threads.transactionsOf("requests", () -> events.add("last work"));

        threads.stop(transactions);
        threads.stopAll();

        assertThat(events).containsExactly("last work");
        assertThat(transactions.isShutdown()).isTrue();
    }

    @Test
    void onlyTheCpuPoolsThreadsAreCpuThreads() throws Exception {
        ThreadPoolExecutor cpu = threads.cpuPool(1, 1);
        ExecutorService completions = threads.s3Completions(1);

        assertThat(cpu.submit(WorkerThreads::onCpuThread).get(10, TimeUnit.SECONDS))
                .isTrue();
        assertThat(completions.submit(WorkerThreads::onCpuThread).get(10, TimeUnit.SECONDS))
                .isFalse();
        assertThat(WorkerThreads.onCpuThread()).isFalse();
    }

    /** A reader's loop, which runs until it is stopped (and its stop waits for its end, as a topic reader's does). */
    private static final class Reader {
        private final List<String> events;
        private final CountDownLatch stopping = new CountDownLatch(1);
        private final CountDownLatch ended = new CountDownLatch(1);

        Reader(List<String> events) {
            this.events = events;
        }

        void read() {
            try {
                stopping.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ended.countDown();
        }

        void stop() {
            stopping.countDown();
            try {
                ended.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            events.add("reader stopped");
        }
    }

    private static <T> T underLoader(ClassLoader loader, Supplier<T> make) {
        Thread current = Thread.currentThread();
        ClassLoader before = current.getContextClassLoader();
        current.setContextClassLoader(loader);
        try {
            return make.get();
        } finally {
            current.setContextClassLoader(before);
        }
    }
}
