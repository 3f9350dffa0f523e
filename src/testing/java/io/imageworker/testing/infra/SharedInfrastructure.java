package io.imageworker.testing.infra;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanOperationInfo;
import javax.management.MBeanParameterInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.ReflectionException;
import javax.management.RuntimeMBeanException;

/**
 * Makes the servers of {@link Infrastructure#get()} one per JVM rather than one per class loader. Quarkus loads a
 * {@code @QuarkusTest} class, and what it uses, in a class loader of its own (a new one per test profile), where
 * every static field starts afresh; plain JUnit tests use the application class loader. The first class loader to
 * start the servers publishes their control in the platform MBean server, which all class loaders share, with
 * JDK types only; the others attach to it.
 */
final class SharedInfrastructure {

    /** A string literal is the same object in every class loader: a JVM-wide lock. */
    static final Object LOCK = "io.imageworker.testing.infra.Infrastructure";

    private static final ObjectName NAME = objectName();

    private SharedInfrastructure() {}

    /** The servers another class loader of this JVM started, if any. */
    static Optional<Infrastructure> attach() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        if (!server.isRegistered(NAME)) {
            return Optional.empty();
        }
        return Optional.of(new Infrastructure(new SharedKafka(server), new SharedStore(server)));
    }

    /** Lets the other class loaders of this JVM use {@code owner}'s servers. */
    static void publish(Infrastructure owner) {
        try {
            ManagementFactory.getPlatformMBeanServer().registerMBean(new Control(owner), NAME);
        } catch (InstanceAlreadyExistsException e) {
            throw new IllegalStateException("Test servers were already published in this JVM", e);
        } catch (JMException e) {
            throw new IllegalStateException("Cannot publish the test servers to other class loaders", e);
        }
    }

    /**
     * Runs {@code action} with this class's class loader as the thread's context class loader: Kafka's clients load
     * their plugins (metrics reporters, serializers) through it, and a Quarkus class loader there would hand this
     * class loader's Kafka classes their own copies (a ClassCastException).
     */
    static <T> T inOwnClassLoader(Supplier<T> action) {
        return inClassLoader(SharedInfrastructure.class.getClassLoader(), action);
    }

    /** Runs {@code action} with {@code loader} as the thread's context class loader. */
    static <T> T inClassLoader(ClassLoader loader, Supplier<T> action) {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return action.get();
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    private static ObjectName objectName() {
        try {
            return new ObjectName("io.imageworker.testing:type=Infrastructure");
        } catch (JMException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The owner's side: attributes and operations over the real handles. */
    private static final class Control implements DynamicMBean {

        private final Map<String, Supplier<Object>> attributes;
        private final Map<String, Runnable> operations;

        Control(Infrastructure owner) {
            ManagedKafka kafka = owner.kafka();
            ManagedStore store = owner.s3();
            this.attributes = Map.ofEntries(
                    attribute("KafkaMode", () -> kafka.mode().name()),
                    attribute("KafkaBootstrapServers", kafka::bootstrapServers),
                    attribute("KafkaPartitions", kafka::partitions),
                    attribute("KafkaSupportsRestart", kafka::supportsRestart),
                    attribute("StoreMode", () -> store.mode().name()),
                    attribute("StoreEndpoint", () -> store.endpoint().toString()),
                    attribute("StoreAccessKey", store::accessKey),
                    attribute("StoreSecretKey", store::secretKey),
                    attribute("StoreRegion", store::region),
                    attribute(
                            "StoreLocalDataDir",
                            () -> store.localDataDir().map(Path::toString).orElse(null)),
                    attribute("StoreSupportsRestart", store::supportsRestart));
            this.operations = Map.of(
                    "stopKafka", kafka::stop,
                    "startKafka", kafka::start,
                    "killKafka", kafka::kill,
                    "stopStore", store::stop,
                    "startStore", store::start);
        }

        private static Map.Entry<String, Supplier<Object>> attribute(String name, Supplier<Object> value) {
            return Map.entry(name, value);
        }

        @Override
        public Object getAttribute(String name) throws AttributeNotFoundException {
            Supplier<Object> attribute = attributes.get(name);
            if (attribute == null) {
                throw new AttributeNotFoundException(name);
            }
            return inOwnClassLoader(attribute);
        }

        @Override
        public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
            throw new AttributeNotFoundException("Read-only: " + attribute.getName());
        }

        @Override
        public AttributeList getAttributes(String[] names) {
            AttributeList list = new AttributeList();
            for (String name : names) {
                if (attributes.containsKey(name)) {
                    list.add(new Attribute(name, inOwnClassLoader(attributes.get(name))));
                }
            }
            return list;
        }

        @Override
        public AttributeList setAttributes(AttributeList list) {
            return new AttributeList();
        }

        @Override
        public Object invoke(String name, Object[] params, String[] signature) throws ReflectionException {
            Runnable operation = operations.get(name);
            if (operation == null) {
                throw new ReflectionException(new NoSuchMethodException(name), name);
            }
            return inOwnClassLoader(() -> {
                operation.run();
                return null;
            });
        }

        @Override
        public MBeanInfo getMBeanInfo() {
            MBeanAttributeInfo[] attributeInfos = attributes.keySet().stream()
                    .sorted()
                    .map(name -> new MBeanAttributeInfo(name, "java.lang.Object", name, true, false, false))
                    .toArray(MBeanAttributeInfo[]::new);
            MBeanOperationInfo[] operationInfos = operations.keySet().stream()
                    .sorted()
                    .map(name -> new MBeanOperationInfo(
                            name, name, new MBeanParameterInfo[0], "void", MBeanOperationInfo.ACTION))
                    .toArray(MBeanOperationInfo[]::new);
            return new MBeanInfo(
                    Control.class.getName(),
                    "The servers of this JVM's tests",
                    attributeInfos,
                    null,
                    operationInfos,
                    null);
        }
    }

    /** Reads an attribute or runs an operation of the published control, rethrowing what the operation threw. */
    private record Remote(MBeanServer server) {

        <T> T get(String attribute, Class<T> type) {
            try {
                return type.cast(server.getAttribute(NAME, attribute));
            } catch (JMException e) {
                throw new IllegalStateException("Cannot read " + attribute + " of the shared test servers", e);
            }
        }

        void run(String operation) {
            try {
                server.invoke(NAME, operation, new Object[0], new String[0]);
            } catch (RuntimeMBeanException e) {
                throw e.getTargetException();
            } catch (JMException e) {
                throw new IllegalStateException("Cannot " + operation + " on the shared test servers", e);
            }
        }
    }

    /** Another class loader's Kafka, used through the platform MBean server. */
    private static final class SharedKafka implements ManagedKafka {

        private final Remote remote;

        SharedKafka(MBeanServer server) {
            this.remote = new Remote(server);
        }

        @Override
        public ServerMode mode() {
            return ServerMode.valueOf(remote.get("KafkaMode", String.class));
        }

        @Override
        public String bootstrapServers() {
            return remote.get("KafkaBootstrapServers", String.class);
        }

        @Override
        public int partitions() {
            return remote.get("KafkaPartitions", Integer.class);
        }

        @Override
        public boolean supportsRestart() {
            return remote.get("KafkaSupportsRestart", Boolean.class);
        }

        @Override
        public void stop() {
            remote.run("stopKafka");
        }

        @Override
        public void start() {
            remote.run("startKafka");
        }

        @Override
        public void kill() {
            remote.run("killKafka");
        }
    }

    /** Another class loader's S3 store, used through the platform MBean server. */
    private static final class SharedStore implements ManagedStore {

        private final Remote remote;

        SharedStore(MBeanServer server) {
            this.remote = new Remote(server);
        }

        @Override
        public ServerMode mode() {
            return ServerMode.valueOf(remote.get("StoreMode", String.class));
        }

        @Override
        public URI endpoint() {
            return URI.create(remote.get("StoreEndpoint", String.class));
        }

        @Override
        public String accessKey() {
            return remote.get("StoreAccessKey", String.class);
        }

        @Override
        public String secretKey() {
            return remote.get("StoreSecretKey", String.class);
        }

        @Override
        public String region() {
            return remote.get("StoreRegion", String.class);
        }

        @Override
        public Optional<Path> localDataDir() {
            return Optional.ofNullable(remote.get("StoreLocalDataDir", String.class))
                    .map(Path::of);
        }

        @Override
        public boolean supportsRestart() {
            return remote.get("StoreSupportsRestart", Boolean.class);
        }

        @Override
        public void stop() {
            remote.run("stopStore");
        }

        @Override
        public void start() {
            remote.run("startStore");
        }
    }
}
