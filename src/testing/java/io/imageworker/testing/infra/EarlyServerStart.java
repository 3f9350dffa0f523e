package io.imageworker.testing.infra;

import java.lang.annotation.Annotation;
import java.util.Arrays;
import java.util.stream.Stream;
import org.jboss.logging.Logger;
import org.junit.platform.engine.discovery.ClassSelector;
import org.junit.platform.engine.discovery.MethodSelector;
import org.junit.platform.launcher.LauncherDiscoveryListener;
import org.junit.platform.launcher.LauncherDiscoveryRequest;

/**
 * Starts this JVM's shared servers ({@link Infrastructure#get()}) in the background as the test discovery starts,
 * when it selects a {@code @QuarkusTest} class. Quarkus builds the application for its tests during the discovery
 * (about 40 s of the unit phase, while no test runs), and the first such class asked for the broker and the store only
 * after it, which then took another 10 to 12 s to start while nothing else ran; started here, they are up by then. A
 * run that selects none (a plain class run alone, an integration test JVM, whose classes start them in {@code
 * @BeforeAll}) starts nothing here.
 *
 * <p>A start that fails is not reported here: {@link Infrastructure#get()} keeps its failure and throws it to the
 * first test that asks. Registered for the JUnit Platform launcher in {@code META-INF/services}.
 */
public final class EarlyServerStart implements LauncherDiscoveryListener {

    private static final Logger LOG = Logger.getLogger(EarlyServerStart.class);

    private static final String QUARKUS_TEST = "io.quarkus.test.junit.QuarkusTest";

    @Override
    public void launcherDiscoveryStarted(LauncherDiscoveryRequest request) {
        if (selectsQuarkusTest(request)) {
            Thread starter = new Thread(EarlyServerStart::start, "image-worker-test-servers-early");
            starter.setDaemon(true);
            starter.start();
        }
    }

    private static void start() {
        try {
            Infrastructure.get();
        } catch (RuntimeException e) {
            LOG.debugf("The early start of the test servers failed; the first test that needs them reports it: %s", e);
        }
    }

    /** Whether {@code request} names a {@code @QuarkusTest} class, or a method of one. */
    public static boolean selectsQuarkusTest(LauncherDiscoveryRequest request) {
        return selectedClassNames(request).anyMatch(EarlyServerStart::isQuarkusTest);
    }

    /** The classes {@code request} names, alone or by one of their methods. */
    public static Stream<String> selectedClassNames(LauncherDiscoveryRequest request) {
        return Stream.concat(
                request.getSelectorsByType(ClassSelector.class).stream().map(ClassSelector::getClassName),
                request.getSelectorsByType(MethodSelector.class).stream().map(MethodSelector::getClassName));
    }

    /** Read without initialising the class, in this class's loader (Quarkus loads its own copy for the test). */
    private static boolean isQuarkusTest(String className) {
        try {
            Class<?> type = Class.forName(className, false, EarlyServerStart.class.getClassLoader());
            return Arrays.stream(type.getAnnotations())
                    .map(Annotation::annotationType)
                    .anyMatch(annotation -> annotation.getName().equals(QUARKUS_TEST));
        } catch (ClassNotFoundException | RuntimeException | LinkageError e) {
            return false;
        }
    }
}
