package io.imageworker.testing.infra;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The one owner of the servers the tests talk to: a Kafka cluster and an S3-compatible store. {@link #get()} gives
 * the JVM-wide instance, started on first use and ended by a shutdown hook. For each server it takes, in order:
 *
 * <ol>
 *   <li>an external server named by the environment: {@code KAFKA_BOOTSTRAP_SERVERS}; {@code
 *       IMAGE_WORKER_STORAGE_ENDPOINT} with {@code AWS_ACCESS_KEY_ID}, {@code AWS_SECRET_ACCESS_KEY} and optionally
 *       {@code AWS_REGION};
 *   <li>a Testcontainers container ({@code apache/kafka}, MinIO) when a Docker engine is reachable;
 *   <li>else an embedded server in a child JVM ({@link KafkaBroker}, {@link S3Server}).
 * </ol>
 *
 * <p>One per JVM, even where Quarkus loads test classes in class loaders of its own: see {@link SharedInfrastructure}.
 *
 * <p>The system property {@value #MODE_PROPERTY} (or the environment variable {@code IMAGE_WORKER_TEST_INFRA})
 * set to {@code embedded} or {@code containers} overrides the choice between the last two. One log line per server
 * says which was chosen.
 */
public final class Infrastructure implements AutoCloseable {

    /** Forces {@code embedded} or {@code containers} for the servers not named by the environment; default auto. */
    public static final String MODE_PROPERTY = "image-worker.test.infra";

    private static final Logger LOG = Logger.getLogger(Infrastructure.class);

    private static Infrastructure shared;
    private static RuntimeException sharedFailure;

    private final ManagedKafka kafka;
    private final ManagedStore store;
    private final AtomicBoolean closed = new AtomicBoolean();

    Infrastructure(ManagedKafka kafka, ManagedStore store) {
        this.kafka = kafka;
        this.store = store;
    }

    /**
     * The servers of this test run, started on the first call (both at once, a few seconds) and shared by every later
     * call; a shutdown hook ends them when the JVM exits.
     *
     * @throws IllegalStateException when they cannot be started (again on every later call, without a retry)
     */
    public static Infrastructure get() {
        synchronized (SharedInfrastructure.LOCK) {
            if (shared != null) {
                return shared;
            }
            if (sharedFailure != null) {
                throw new IllegalStateException("The test servers failed to start earlier in this JVM", sharedFailure);
            }
            startInApplicationClassLoader();
            Optional<Infrastructure> started = SharedInfrastructure.attach();
            if (started.isPresent()) {
                shared = started.get();
                return shared;
            }
            try {
                shared = chooseAndStart();
            } catch (RuntimeException e) {
                sharedFailure = e;
                throw e;
            }
            SharedInfrastructure.publish(shared);
            Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "image-worker-test-servers-shutdown"));
            return shared;
        }
    }

    /**
     * Servers of the caller's own, chosen as {@link #get()} chooses them (external ones when the environment names
     * them, else containers or embedded servers), for a test that stops, kills or restarts its servers: every test
     * of the JVM shares {@link #get()}'s while the test classes run side by side. The caller closes them; a shutdown
     * hook does at the latest.
     */
    public static Infrastructure startOwn() {
        Infrastructure own = chooseAndStart();
        Runtime.getRuntime().addShutdownHook(new Thread(own::close, "image-worker-own-servers-shutdown"));
        return own;
    }

    /**
     * Called in a class loader of Quarkus's, has the application class loader's copy of this class own the servers:
     * it outlives the Quarkus class loaders, which are closed after their tests.
     */
    private static void startInApplicationClassLoader() {
        ClassLoader application = ClassLoader.getSystemClassLoader();
        if (Infrastructure.class.getClassLoader() == application) {
            return;
        }
        Class<?> owner;
        try {
            owner = Class.forName(Infrastructure.class.getName(), true, application);
        } catch (ClassNotFoundException | LinkageError e) {
            return; // Test classes not on the application class path (an unusual runner): this class loader owns them.
        }
        Method get;
        try {
            get = owner.getMethod("get");
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
        // Its code runs Kafka clients, which load plugins through the context class loader: make it theirs.
        SharedInfrastructure.inClassLoader(application, () -> {
            try {
                return get.invoke(null);
            } catch (InvocationTargetException e) {
                throw e.getCause() instanceof RuntimeException cause ? cause : new IllegalStateException(e.getCause());
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /**
     * Starts an embedded broker and an embedded S3 server on free ports, with their data under {@code dataDir}
     * ({@code kafka/} and {@code s3/}, kept across runs), for a local run of the worker. They are stopped by
     * {@link #close()} or, at the latest, when the JVM exits.
     */
    public static Infrastructure startEmbedded(Path dataDir) {
        return startEmbedded(dataDir, 0, 0);
    }

    /**
     * As {@link #startEmbedded(Path)}, on the given ports.
     *
     * @param kafkaPort the broker's client port, 0 for a free one
     * @param s3Port the S3 server's HTTP port, 0 for a free one
     */
    public static Infrastructure startEmbedded(Path dataDir, int kafkaPort, int s3Port) {
        Infrastructure infrastructure = startBoth(
                () -> started(KafkaBroker.persistent(dataDir.resolve("kafka"), kafkaPort)),
                () -> started(S3Server.persistent(dataDir.resolve("s3"), s3Port)));
        infrastructure.logChoice("the local run", "");
        Runtime.getRuntime().addShutdownHook(new Thread(infrastructure::close, "image-worker-servers-shutdown"));
        return infrastructure;
    }

    /** The Kafka cluster. */
    public ManagedKafka kafka() {
        return kafka;
    }

    /** The S3-compatible store. */
    public ManagedStore s3() {
        return store;
    }

    /** The Kafka {@code bootstrap.servers} value. */
    public String kafkaBootstrapServers() {
        return kafka.bootstrapServers();
    }

    /** The S3 endpoint override (path-style). */
    public URI s3Endpoint() {
        return store.endpoint();
    }

    /** The S3 access key id. */
    public String s3AccessKey() {
        return store.accessKey();
    }

    /** The S3 secret access key. */
    public String s3SecretKey() {
        return store.secretKey();
    }

    /** The S3 region. */
    public String s3Region() {
        return store.region();
    }

    /**
     * The settings that point a worker at these servers (by their names in {@code application.properties}), storing
     * its images in {@code bucket}, which it creates when it is missing.
     */
    public Map<String, String> workerSettings(String bucket) {
        return Map.of(
                "kafka.bootstrap.servers", kafka.bootstrapServers(),
                "image-worker.storage.endpoint", store.endpoint().toString(),
                "image-worker.storage.access-key-id", store.accessKey(),
                "image-worker.storage.secret-access-key", store.secretKey(),
                "image-worker.storage.region", store.region(),
                "image-worker.storage.bucket", bucket,
                "image-worker.storage.create-bucket", "true");
    }

    /** Ends the servers this instance started (external servers are left alone). Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        closeQuietly(kafka);
        closeQuietly(store);
    }

    /**
     * Whether {@link #get()} and {@link #startOwn()} start both servers embedded, each in a JVM of its own (no server
     * named by the environment, no Docker engine or {@code embedded} chosen): the kind a local run starts.
     */
    public static boolean choosesEmbedded() {
        return env("KAFKA_BOOTSTRAP_SERVERS") == null
                && env("IMAGE_WORKER_STORAGE_ENDPOINT") == null
                && !containersChosen();
    }

    private static boolean containersChosen() {
        String preference = preference();
        return preference.equals("auto") ? Docker.isAvailable() : preference.equals("containers");
    }

    private static Infrastructure chooseAndStart() {
        String kafkaEnv = env("KAFKA_BOOTSTRAP_SERVERS");
        String storeEnv = env("IMAGE_WORKER_STORAGE_ENDPOINT");
        String preference = preference();
        boolean containers;
        String reason;
        if (kafkaEnv != null && storeEnv != null) {
            containers = false;
            reason = "";
        } else {
            containers = containersChosen();
            reason = !preference.equals("auto")
                    ? MODE_PROPERTY + "=" + preference
                    : containers ? "Docker engine found" : "no Docker engine found";
        }
        Supplier<ManagedKafka> kafka;
        if (kafkaEnv != null) {
            kafka = () -> new ExternalKafka(kafkaEnv);
        } else if (containers) {
            kafka = () -> new ContainerKafka(KafkaBroker.DEFAULT_PARTITIONS);
        } else {
            kafka = () -> started(KafkaBroker.temporary());
        }
        Supplier<ManagedStore> store;
        if (storeEnv != null) {
            store = () -> externalStore(storeEnv);
        } else if (containers) {
            store = ContainerStore::new;
        } else {
            store = () -> started(S3Server.temporary());
        }
        Infrastructure infrastructure = startBoth(kafka, store);
        infrastructure.logChoice("tests", reason);
        return infrastructure;
    }

    /** Starts both servers at once; when one fails, ends the other and throws. */
    private static Infrastructure startBoth(Supplier<ManagedKafka> kafka, Supplier<ManagedStore> store) {
        ExecutorService starters = Executors.newFixedThreadPool(2, runnable -> {
            Thread thread = new Thread(runnable, "image-worker-test-servers-start");
            thread.setDaemon(true);
            thread.setContextClassLoader(Infrastructure.class.getClassLoader());
            return thread;
        });
        try {
            CompletableFuture<ManagedKafka> startingKafka = CompletableFuture.supplyAsync(kafka, starters);
            CompletableFuture<ManagedStore> startingStore = CompletableFuture.supplyAsync(store, starters);
            try {
                CompletableFuture.allOf(startingKafka, startingStore).join();
            } catch (CompletionException e) {
                startingKafka.thenAccept(Infrastructure::closeQuietly);
                startingStore.thenAccept(Infrastructure::closeQuietly);
                throw e.getCause() instanceof RuntimeException cause ? cause : e;
            }
            return new Infrastructure(startingKafka.join(), startingStore.join());
        } finally {
            starters.shutdown();
        }
    }

    /** {@code server}, started; closed when it does not start. */
    private static <T extends EmbeddedServer> T started(T server) {
        try {
            server.start();
            return server;
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    private static ExternalStore externalStore(String endpoint) {
        String accessKey = env("AWS_ACCESS_KEY_ID");
        String secretKey = env("AWS_SECRET_ACCESS_KEY");
        if (accessKey == null || secretKey == null) {
            throw new IllegalStateException("IMAGE_WORKER_STORAGE_ENDPOINT is set (" + endpoint
                    + ") but AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not: the tests need both to use that store");
        }
        String region = env("AWS_REGION");
        return new ExternalStore(URI.create(endpoint), accessKey, secretKey, region != null ? region : S3Server.REGION);
    }

    private void logChoice(String purpose, String reason) {
        for (ManagedServer server : List.of(kafka, store)) {
            String why = reason.isEmpty() || server.mode() == ServerMode.EXTERNAL ? "" : " (" + reason + ")";
            LOG.infof("%s for %s: %s%s", server == kafka ? "Kafka" : "S3", purpose, server.description(), why);
        }
    }

    private static String preference() {
        String value = System.getProperty(MODE_PROPERTY);
        if (value == null || value.isBlank()) {
            value = env("IMAGE_WORKER_TEST_INFRA");
        }
        String preference = value == null ? "auto" : value.strip().toLowerCase(Locale.ROOT);
        if (!preference.equals("auto") && !preference.equals("embedded") && !preference.equals("containers")) {
            throw new IllegalArgumentException(
                    MODE_PROPERTY + " must be auto, embedded or containers, not '" + value + "'");
        }
        return preference;
    }

    private static String env(String name) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? null : value.strip();
    }

    private static void closeQuietly(Object server) {
        if (server instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                LOG.warnf(e, "Could not end a test server cleanly");
            }
        }
    }
}
