package io.imageworker.testing.launch;

import io.imageworker.testing.infra.Infrastructure;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts this JVM's shared servers ({@link Infrastructure#get()}) before a test class's tests run, for the integration
 * tests with a {@code @Timeout}: a timeout bounds the test's own work, and the start of a broker and a store that the
 * first test class to ask pays took 20 s in a quiet full run and 87 s on a heavily loaded machine, where it ended a
 * test at its 3 minutes (November 2026). JUnit's {@code @Timeout} on a test method does not cover
 * {@code @BeforeAll} callbacks; {@link Infrastructure#get()} fails again at once if the start failed.
 */
public final class SharedServersFirst implements BeforeAllCallback {

    @Override
    public void beforeAll(ExtensionContext context) {
        Infrastructure.get();
    }
}
