package io.imageworker.testing.launch;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * About how long an integration test class runs on a quiet 2-core machine, from the surefire reports of a full run:
 * {@link IntegrationTestsFirst} starts the longest first, so that the suite's threads end together instead of one
 * long class running nearly alone at the end. Only an order: no test depends on the figure, and a class without it
 * starts after those with it.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface TakesAbout {

    /** Seconds, rounded. */
    int seconds();
}
