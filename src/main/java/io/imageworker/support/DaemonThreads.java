package io.imageworker.support;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

/**
 * The threads the worker makes itself (beside Quarkus's, Vert.x's and Kafka's): each one a daemon, so that none of
 * them keeps the JVM alive after Quarkus has shut down, and each one named, so that a thread dump says whose it is.
 * Every executor and thread of the main code is made through here.
 *
 * <p>Each thread's context class loader is the one of the thread that made the factory (the application's), not the
 * one of the thread that happens to start it: a pool starts its threads lazily, from whichever thread hands it the
 * first task, and the S3 client's native event loops (the AWS Common Runtime's) carry the system class loader, under
 * which CDI's lookups fail ({@code ClassNotFoundException: jakarta/enterprise/inject/spi/InjectionPoint}).
 */
public final class DaemonThreads {

    private DaemonThreads() {}

    /** Daemon threads all named {@code name}: for an executor of one thread, or a thread of its own. */
    public static ThreadFactory named(String name) {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        return task -> daemon(new Thread(task, name), loader);
    }

    /** Daemon threads named {@code prefix-1}, {@code prefix-2} and so on: for a pool. */
    public static ThreadFactory numbered(String prefix) {
        return numbered(prefix, Thread::new);
    }

    /** The same, each made by {@code make} from its task and its name (a subclass of {@link Thread} the pool knows). */
    public static ThreadFactory numbered(String prefix, BiFunction<Runnable, String, Thread> make) {
        AtomicInteger sequence = new AtomicInteger();
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        return task -> daemon(make.apply(task, prefix + "-" + sequence.incrementAndGet()), loader);
    }

    private static Thread daemon(Thread thread, ClassLoader loader) {
        thread.setDaemon(true);
        thread.setContextClassLoader(loader);
        return thread;
    }
}
