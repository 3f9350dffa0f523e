package io.imageworker.testing.launch;

import java.lang.annotation.Annotation;
import java.util.Comparator;
import org.junit.jupiter.api.ClassDescriptor;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;

/**
 * The order of the test classes within each of Quarkus's groups (its {@code junit.quarkus.orderer.secondary-orderer}):
 * the integration tests ({@code *IT}, which start packaged workers and mostly wait on them: calls of seconds, pauses,
 * graces) first, the longest first ({@link TakesAbout}), then the others, each by name. The suite runs its classes side
 * by side in a few threads, which take the classes in this order: started by name, the longest integration tests came
 * last and ran nearly alone at the end, two cores half idle; started first and longest first, their waits overlap with
 * the unit tests' CPU and the short classes fill the threads' ends. A class that says {@link EndsItsApplication} comes
 * after all the others of its group: the application it leaves unusable stops right after it.
 */
public final class IntegrationTestsFirst implements ClassOrderer {

    @Override
    public void orderClasses(ClassOrdererContext context) {
        context.getClassDescriptors()
                .sort(Comparator.comparing((ClassDescriptor test) -> annotated(test, EndsItsApplication.class))
                        .thenComparing(test -> !isIntegrationTest(test))
                        .thenComparing(IntegrationTestsFirst::seconds, Comparator.reverseOrder())
                        .thenComparing(test -> test.getTestClass().getName()));
    }

    private static boolean isIntegrationTest(ClassDescriptor test) {
        return test.getTestClass().getSimpleName().endsWith("IT");
    }

    /**
     * The class's {@link TakesAbout}, found by name: Quarkus loads the test classes in a class loader of its own, where
     * the annotation is another class than this one's.
     */
    /** Whether the class says {@code annotation}, found by name (see {@link #seconds}). */
    private static boolean annotated(ClassDescriptor test, Class<? extends Annotation> annotation) {
        for (Annotation present : test.getTestClass().getAnnotations()) {
            if (present.annotationType().getName().equals(annotation.getName())) {
                return true;
            }
        }
        return false;
    }

    private static int seconds(ClassDescriptor test) {
        for (Annotation annotation : test.getTestClass().getAnnotations()) {
            if (annotation.annotationType().getName().equals(TakesAbout.class.getName())) {
                try {
                    return (int)
                            annotation.annotationType().getMethod("seconds").invoke(annotation);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException("unreadable " + annotation, e);
                }
            }
        }
        return 0;
    }
}
