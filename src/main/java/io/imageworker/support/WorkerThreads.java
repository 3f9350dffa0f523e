package io.imageworker.support;

import io.quarkus.logging.Log;
import jakarta.annotation.PreDestroy;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.BeforeDestroyed;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import software.amazon.awssdk.http.nio.netty.SdkEventLoopGroup;

/**
 * The one maker and owner of the threads the worker runs itself, beside Quarkus's, Vert.x's and the Kafka clients'
 * (its timers are Vert.x's). Only these are threads of its own, each for a reason: the side topics' readers (a plain
 * Kafka consumer's poll blocks), the transactions of each request topic (a transactional producer's calls block), the
 * CPU pool ({@link CpuWork}: work in proportion to a payload, off the event loops), the S3 client's completion pool
 * (the SDK completes its futures on an executor; its default one grows up to 64 threads) and, when {@code netty} is its
 * HTTP stack, its event loops. No other class of the main code makes a thread or an executor ({@code
 * ArchitectureTest}).
 *
 * <p>Each thread is a daemon, so that none of them keeps the JVM alive after Quarkus has shut down, and named, so that a
 * thread dump says whose it is. Each one's context class loader is the one of the thread that made its factory (the
 * application's), not the one of the thread that happens to start it: a pool starts its threads lazily, from whichever
 * thread hands it the first task, and the S3 client's native event loops (the AWS Common Runtime's) carry the system
 * class loader, under which CDI's lookups fail ({@code ClassNotFoundException:
 * jakarta/enterprise/inject/spi/InjectionPoint}).
 *
 * <p>They stop in this order at shutdown, each at most once (an owner of the work on them may stop its own earlier,
 * through here):
 *
 * <ol>
 *   <li>the readers, then the transactions' threads, once the Kafka connector has closed its clients ({@link
 *       #kafkaClosed}: the drain is over, and the consumers' last revocations have committed their offsets in a
 *       transaction on these threads): each reader woken from its poll and waited for, then each transactions' thread
 *       given its last work (what is still queued, in a last transaction, and the producer's close), then stopped;
 *   <li>the S3 client's Netty event loops (with {@code netty}) and completion pool, once the client is closed ({@link
 *       #stop(SdkEventLoopGroup)}, {@link #stop(ExecutorService)}, from its disposer);
 *   <li>the CPU pool, last, as the application's beans are destroyed ({@link #stopAll}): tasks already queued run.
 * </ol>
 */
@ApplicationScoped
public class WorkerThreads {

    /** How long a transactions' thread's last work may take at shutdown. */
    static final Duration LAST_WORK = Duration.ofSeconds(10);

    /**
     * After the Kafka connector's own observer ({@code KafkaConnector.terminate}, priority 50), which closes the
     * consumers (their last revocations commit on the transactions' threads) and the producers.
     */
    private static final int AFTER_KAFKA = 100;

    /** The readers' threads alive, and how each one's reading is stopped. */
    private final Map<Thread, Runnable> readers = new ConcurrentHashMap<>();
    /** The transactions' threads not yet stopped, and the last work of each. */
    private final Map<ScheduledExecutorService, Runnable> transactions = new ConcurrentHashMap<>();
    /** Netty's event loops of the S3 client not yet stopped (made only when {@code netty} is its HTTP stack). */
    private final Set<SdkEventLoopGroup> eventLoops = ConcurrentHashMap.newKeySet();
    /** The pools not yet stopped, and of which kind each is. */
    private final Map<ExecutorService, Pool> pools = new ConcurrentHashMap<>();

    /** The kinds of pools, in the order they stop. */
    private enum Pool {
        S3_COMPLETIONS,
        CPU
    }

    /**
     * Starts a daemon thread named {@code name} that runs {@code read} (a Kafka consumer's loop) until {@code stop},
     * which ends the loop and waits for it, is called: by the reader's owner, or here at shutdown.
     */
    public Thread startReader(String name, Runnable read, Runnable stop) {
        Thread[] self = new Thread[1];
        Thread reader = named(name).newThread(() -> {
            try {
                read.run();
            } finally {
                readers.remove(self[0]);
            }
        });
        self[0] = reader;
        readers.put(reader, stop);
        reader.start();
        return reader;
    }

    /**
     * The thread of the transactions of {@code topic}: one thread, for scheduled work too. At shutdown, {@code last}
     * runs on it (within {@link #LAST_WORK}) before it stops ({@link #stop(ScheduledExecutorService)}).
     */
    public ScheduledExecutorService transactionsOf(String topic, Runnable last) {
        ScheduledExecutorService thread =
                Executors.newSingleThreadScheduledExecutor(named("image-worker-transactions-" + topic));
        transactions.put(thread, last);
        return thread;
    }

    /**
     * The CPU pool: {@code threads} threads of {@link #onCpuThread() their own kind}, holding at most {@code queued}
     * tasks beyond them; a task beyond those fails ({@link RejectedExecutionException}) instead of running on the
     * caller's thread.
     */
    public ThreadPoolExecutor cpuPool(int threads, int queued) {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                threads,
                threads,
                0,
                TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(queued + threads),
                numbered("image-worker-cpu", CpuThread::new),
                new ThreadPoolExecutor.AbortPolicy());
        pools.put(pool, Pool.CPU);
        return pool;
    }

    /**
     * Netty's event loops for the S3 client, when {@code netty} is its HTTP stack (the SDK's own default loops; the
     * default stack, the AWS Common Runtime's, runs native loops of its own).
     */
    public SdkEventLoopGroup s3EventLoops() {
        SdkEventLoopGroup loops = SdkEventLoopGroup.builder().build();
        eventLoops.add(loops);
        return loops;
    }

    /**
     * Stops Netty's event loops of the S3 client, once the client is closed: without the quiet period of 2 s the SDK
     * waits when it closes loops it made itself (nothing more is sent by then, and the 2 s were added to every stop of
     * the worker). Once only.
     */
    public void stop(SdkEventLoopGroup loops) {
        if (eventLoops.remove(loops)) {
            loops.eventLoopGroup()
                    .shutdownGracefully(0, 15, TimeUnit.SECONDS)
                    .awaitUninterruptibly(16, TimeUnit.SECONDS);
        }
    }

    /** Whether the current thread is one of the CPU pool's. */
    public static boolean onCpuThread() {
        return Thread.currentThread() instanceof CpuThread;
    }

    /** The pool of {@code threads} threads on which the S3 client completes its futures. */
    public ExecutorService s3Completions(int threads) {
        ExecutorService pool = Executors.newFixedThreadPool(threads, numbered("s3-completion", Thread::new));
        pools.put(pool, Pool.S3_COMPLETIONS);
        return pool;
    }

    /**
     * Stops a transactions' thread: its last work runs on it first, waited for at most {@link #LAST_WORK}, then it is
     * stopped (a task it still runs is interrupted). Once only: a thread stopped already is left as it is.
     */
    public void stop(ScheduledExecutorService thread) {
        Runnable last = transactions.remove(thread);
        if (last == null) {
            return;
        }
        try {
            thread.submit(last).get(LAST_WORK.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
            Log.debugf("The last work of a transactions' thread: %s", e.toString());
        }
        thread.shutdownNow();
    }

    /** Stops a pool: the tasks queued still run, no new one is taken. Once only. */
    public void stop(ExecutorService pool) {
        if (pools.remove(pool) != null) {
            pool.shutdown();
        }
    }

    /**
     * The readers and the transactions' threads, once the Kafka connector has closed its clients (the drain is over,
     * the last revocations committed): no record is read or committed any more.
     */
    void kafkaClosed(
            @Observes(notifyObserver = Reception.IF_EXISTS)
                    @Priority(AFTER_KAFKA)
                    @BeforeDestroyed(ApplicationScoped.class)
                    Object event) {
        stopKafkaThreads();
    }

    private void stopKafkaThreads() {
        List.copyOf(readers.values()).forEach(Runnable::run);
        List.copyOf(transactions.keySet()).forEach(this::stop);
    }

    /**
     * Everything still running, in the order above: the readers, the transactions, the S3 client's event loops (with
     * {@code netty}) and completions, the CPU pool.
     */
    @PreDestroy
    public void stopAll() {
        stopKafkaThreads();
        List.copyOf(eventLoops).forEach(this::stop);
        pools.entrySet().stream()
                .sorted(Map.Entry.comparingByValue())
                .map(Map.Entry::getKey)
                .toList()
                .forEach(this::stop);
    }

    /** Daemon threads all named {@code name}: for an executor of one thread, or a thread of its own. */
    static ThreadFactory named(String name) {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        return task -> daemon(new Thread(task, name), loader);
    }

    /** Daemon threads named {@code prefix-1}, {@code prefix-2} and so on, each made by {@code make}: for a pool. */
    static ThreadFactory numbered(String prefix, BiFunction<Runnable, String, Thread> make) {
        AtomicInteger sequence = new AtomicInteger();
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        return task -> daemon(make.apply(task, prefix + "-" + sequence.incrementAndGet()), loader);
    }

    private static Thread daemon(Thread thread, ClassLoader loader) {
        thread.setDaemon(true);
        thread.setContextClassLoader(loader);
        return thread;
    }

    /** A thread of the CPU pool. */
    private static final class CpuThread extends Thread {
        CpuThread(Runnable task, String name) {
            super(task, name);
        }
    }
}
