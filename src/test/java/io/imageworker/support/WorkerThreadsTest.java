package io.imageworker.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class DaemonThreadsTest {

    /** A class loader of its own, so that the factory's and the starting thread's loaders tell apart. */
    private static final ClassLoader APPLICATION =
            new URLClassLoader(new URL[0], DaemonThreadsTest.class.getClassLoader());

    @Test
    void aPoolThreadCarriesTheFactorysClassLoaderWhicheverThreadStartsIt() throws Exception {
        ThreadFactory factory = underLoader(APPLICATION, () -> DaemonThreads.numbered("test-pool"));
        ExecutorService pool = Executors.newFixedThreadPool(1, factory);
        try {
            AtomicReference<ClassLoader> seen = new AtomicReference<>();
            AtomicReference<String> name = new AtomicReference<>();
            // The first task, which starts the pool's thread, comes from a thread with the system class loader, as
            // the S3 client's native event loops do.
            Thread foreign = new Thread(() -> pool.execute(() -> {
                seen.set(Thread.currentThread().getContextClassLoader());
                name.set(Thread.currentThread().getName());
            }));
            foreign.setContextClassLoader(ClassLoader.getSystemClassLoader());
            foreign.start();
            foreign.join();
            pool.shutdown();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

            assertThat(seen.get()).isSameAs(APPLICATION);
            assertThat(name.get()).isEqualTo("test-pool-1");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aNamedThreadIsADaemonWithTheFactorysClassLoader() {
        ThreadFactory factory = underLoader(APPLICATION, () -> DaemonThreads.named("test-one"));
        AtomicReference<Thread> made = new AtomicReference<>();
        Thread foreign = new Thread(() -> made.set(factory.newThread(() -> {})));
        foreign.setContextClassLoader(ClassLoader.getSystemClassLoader());
        foreign.start();
        try {
            foreign.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }

        assertThat(made.get().isDaemon()).isTrue();
        assertThat(made.get().getName()).isEqualTo("test-one");
        assertThat(made.get().getContextClassLoader()).isSameAs(APPLICATION);
    }

    private static <T> T underLoader(ClassLoader loader, java.util.function.Supplier<T> make) {
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
