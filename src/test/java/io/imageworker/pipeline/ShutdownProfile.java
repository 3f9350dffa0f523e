package io.imageworker.pipeline;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * The default settings in an application of its own: its tests put the worker in its shutdown state, which lasts
 * until the application stops, so no other test may share it.
 */
public class ShutdownProfile implements QuarkusTestProfile {}
