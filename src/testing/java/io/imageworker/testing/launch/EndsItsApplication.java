package io.imageworker.testing.launch;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A {@code @QuarkusTest} class that leaves its application in a state no later test may share (the worker's shutdown
 * state, which lasts until the application stops). {@link IntegrationTestsFirst} runs it after every other class of its
 * group of profile and test resources, so that it needs no profile of its own (a profile is an application built and
 * started of its own: a restart on the Quarkus chain).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface EndsItsApplication {}
