package io.imageworker.testing.infra;

import java.lang.annotation.Annotation;
import java.util.Arrays;
import org.jboss.logging.Logger;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestPlan;

/**
 * Starts this JVM's shared servers ({@link Infrastructure#get()}) in the background as soon as the test plan is
 * known, when the plan holds a {@code @QuarkusTest} class. Otherwise the first such class asks for them only after
 * Quarkus has built the application for its tests (about 40 s into the unit phase), and the broker and the store then
 * start (about 12 s) while nothing else waits on them; started here, they are up by then. A plan without one (a plain
 * class run alone, an integration test JVM, whose classes start them in {@code @BeforeAll}) starts nothing here.
 *
 * <p>A start that fails is not reported here: {@link Infrastructure#get()} keeps its failure and throws it to the
 * first test that asks. Registered for the JUnit Platform launcher in {@code META-INF/services}.
 */
public final class EarlyServerStart implements TestExecutionListener {

    private static final Logger LOG = Logger.getLogger(EarlyServerStart.class);

    private static final String QUARKUS_TEST = "io.quarkus.test.junit.QuarkusTest";

    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        if (holdsQuarkusTest(plan)) {
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

    static boolean holdsQuarkusTest(TestPlan plan) {
        return plan.getRoots().stream()
                .flatMap(root -> plan.getDescendants(root).stream())
                .map(identifier -> identifier.getSource().orElse(null))
                .anyMatch(EarlyServerStart::isQuarkusTestClass);
    }

    private static boolean isQuarkusTestClass(TestSource source) {
        if (!(source instanceof ClassSource classSource)) {
            return false;
        }
        try {
            return Arrays.stream(classSource.getJavaClass().getAnnotations())
                    .map(Annotation::annotationType)
                    .anyMatch(type -> type.getName().equals(QUARKUS_TEST));
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }
}
