package io.imageworker.testing.infra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;

/** Which discovery requests start the shared servers early: those that select a {@code @QuarkusTest} class. */
class EarlyServerStartTest {

    private static final String QUARKUS_TEST_CLASS = "io.imageworker.pipeline.TracingTest";

    @Test
    void aRequestSelectingAQuarkusTestClassOrOneOfItsMethodsStartsThem() {
        assertThat(EarlyServerStart.selectsQuarkusTest(LauncherDiscoveryRequestBuilder.request()
                        .selectors(selectClass(EarlyServerStartTest.class.getName()), selectClass(QUARKUS_TEST_CLASS))
                        .build()))
                .isTrue();
        assertThat(EarlyServerStart.selectsQuarkusTest(LauncherDiscoveryRequestBuilder.request()
                        .selectors(selectMethod(QUARKUS_TEST_CLASS + "#anything"))
                        .build()))
                .isTrue();
    }

    @Test
    void aRequestOfPlainClassesOrUnknownNamesOrNoClassStartsNothing() {
        assertThat(EarlyServerStart.selectsQuarkusTest(LauncherDiscoveryRequestBuilder.request()
                        .selectors(
                                selectClass(EarlyServerStartTest.class.getName()),
                                selectClass("io.imageworker.NoSuchClass"))
                        .build()))
                .isFalse();
        assertThat(EarlyServerStart.selectsQuarkusTest(LauncherDiscoveryRequestBuilder.request()
                        .selectors(selectPackage("io.imageworker.pipeline"))
                        .build()))
                .isFalse();
    }
}
