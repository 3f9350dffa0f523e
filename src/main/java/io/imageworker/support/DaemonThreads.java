package io.imageworker.support;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

/**
 * The threads the worker makes itself (beside Quarkus's, Vert.x's and Kafka's): each one a daemon, so that none of
 * them keeps the JVM alive after Quarkus has shut down, and each one named, so that a thread dump says whose it is.
 * Every executor and thread of the main code is made through here.
 */
public final class DaemonThreads {

    private DaemonThreads() {}

    /** Daemon threads all named {@code name}: for an executor of one thread, or a thread of its own. */
    public static ThreadFactory named(String name) {
        return task -> daemon(new Thread(task, name));
    }

    /** Daemon threads named {@code prefix-1}, {@code prefix-2} and so on: for a pool. */
    public static ThreadFactory numbered(String prefix) {
        return numbered(prefix, Thread::new);
    }

    /** The same, each made by {@code make} from its task and its name (a subclass of {@link Thread} the pool knows). */
    public static ThreadFactory numbered(String prefix, BiFunction<Runnable, String, Thread> make) {
        AtomicInteger sequence = new AtomicInteger();
        return task -> daemon(make.apply(task, prefix + "-" + sequence.incrementAndGet()));
    }

    private static Thread daemon(Thread thread) {
        thread.setDaemon(true);
        return thread;
    }
}
