package io.imageworker.testing.infra;

import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
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
 * JDK types only; the others attach to it through proxies of {@link ManagedKafka} and {@link ManagedStore}.
 */
final class SharedInfrastructure {

    /** A string literal is the same object in every class loader: a JVM-wide lock. */
    static final Object LOCK = "io.imageworker.testing.infra.Infrastructure";

    private static final ObjectName NAME = objectName();

    /**
     * The methods without parameters that an attached proxy runs itself, as the interface's defaults, because they
     * only combine the others (and a client must be of this class loader); every other one is asked of the owner.
     * Methods with parameters (topic and bucket creation) are defaults of that kind too.
     */
    private static final Set<String> LOCAL = Set.of("restart", "newAsyncClient");

    private SharedInfrastructure() {}

    /** The servers another class loader of this JVM started, if any. */
    static Optional<Infrastructure> attach() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        if (!server.isRegistered(NAME)) {
            return Optional.empty();
        }
        return Optional.of(new Infrastructure(
                remote(ManagedKafka.class, "kafka", server), remote(ManagedStore.class, "store", server)));
    }

    /** Lets the other class loaders of this JVM use {@code owner}'s servers. */
    static void publish(Infrastructure owner) {
        try {
            ManagementFactory.getPlatformMBeanServer()
                    .registerMBean(new Control(Map.of("kafka", owner.kafka(), "store", owner.s3())), NAME);
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

    /** The owner's server {@code name} seen from this class loader: each call goes to the owner's object. */
    private static <T extends ManagedServer> T remote(Class<T> type, String name, MBeanServer server) {
        InvocationHandler handler = (proxy, method, args) -> {
            switch (method.getName()) {
                case "toString" -> {
                    return "shared " + name + " server";
                }
                case "hashCode" -> {
                    return System.identityHashCode(proxy);
                }
                case "equals" -> {
                    return proxy == args[0];
                }
                default -> {
                    if (args != null || LOCAL.contains(method.getName())) {
                        return InvocationHandler.invokeDefault(proxy, method, args);
                    }
                    return fromJdkType(method.getReturnType(), call(server, name + "." + method.getName()));
                }
            }
        };
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler));
    }

    /** Runs an operation of the published control, rethrowing what the owner's server threw. */
    private static Object call(MBeanServer server, String operation) {
        try {
            return server.invoke(NAME, operation, new Object[0], new String[0]);
        } catch (RuntimeMBeanException e) {
            throw e.getTargetException();
        } catch (JMException e) {
            throw new IllegalStateException("Cannot " + operation + " on the shared test servers", e);
        }
    }

    /** What crosses between class loaders: JDK types only (an enum by its name, a URI or a path as text). */
    private static Object toJdkType(Object value) {
        if (value instanceof Enum<?> constant) {
            return constant.name();
        }
        if (value instanceof URI || value instanceof Path) {
            return value.toString();
        }
        if (value instanceof Optional<?> optional) {
            return optional.map(Object::toString).orElse(null);
        }
        return value;
    }

    private static Object fromJdkType(Class<?> type, Object value) {
        if (type == ServerMode.class) {
            return ServerMode.valueOf((String) value);
        }
        if (type == URI.class) {
            return URI.create((String) value);
        }
        if (type == Optional.class) {
            // The one optional of these interfaces: the store's local data directory.
            return Optional.ofNullable((String) value).map(Path::of);
        }
        return value;
    }

    /** The owner's side: runs {@code <server>.<method>} on the real handles, in the owner's class loader. */
    private record Control(Map<String, ManagedServer> servers) implements DynamicMBean {

        @Override
        public Object invoke(String operation, Object[] params, String[] signature) throws ReflectionException {
            String[] target = operation.split("\\.", 2);
            ManagedServer server = servers.get(target[0]);
            if (server == null || target.length < 2) {
                throw new ReflectionException(new NoSuchMethodException(operation), operation);
            }
            Class<?> type = server instanceof ManagedKafka ? ManagedKafka.class : ManagedStore.class;
            try {
                var method = type.getMethod(target[1]);
                return inOwnClassLoader(() -> {
                    try {
                        return toJdkType(method.invoke(server));
                    } catch (InvocationTargetException e) {
                        throw e.getCause() instanceof RuntimeException cause
                                ? cause
                                : new IllegalStateException(e.getCause());
                    } catch (IllegalAccessException e) {
                        throw new IllegalStateException(e);
                    }
                });
            } catch (NoSuchMethodException e) {
                throw new ReflectionException(e, operation);
            }
        }

        @Override
        public Object getAttribute(String name) throws AttributeNotFoundException {
            throw new AttributeNotFoundException(name);
        }

        @Override
        public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
            throw new AttributeNotFoundException(attribute.getName());
        }

        @Override
        public AttributeList getAttributes(String[] names) {
            return new AttributeList();
        }

        @Override
        public AttributeList setAttributes(AttributeList list) {
            return new AttributeList();
        }

        @Override
        public MBeanInfo getMBeanInfo() {
            MBeanOperationInfo call = new MBeanOperationInfo(
                    "<server>.<method>",
                    "a method without parameters of the shared kafka or store",
                    new MBeanParameterInfo[0],
                    "java.lang.Object",
                    MBeanOperationInfo.UNKNOWN);
            return new MBeanInfo(
                    Control.class.getName(),
                    "The servers of this JVM's tests",
                    null,
                    null,
                    new MBeanOperationInfo[] {call},
                    null);
        }
    }
}
