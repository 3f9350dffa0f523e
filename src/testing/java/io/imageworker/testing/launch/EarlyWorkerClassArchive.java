package io.imageworker.testing.launch;

import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.infra.EarlyServerStart;
import org.junit.platform.launcher.LauncherDiscoveryListener;
import org.junit.platform.launcher.LauncherDiscoveryRequest;

/**
 * Starts making the workers' class archive ({@link WorkerClassArchive}) in the background as the test discovery starts,
 * when it selects an integration test ({@code *IT}) or a {@code @QuarkusTest} class and the worker is packaged. The
 * discovery takes 45 to 60 s in the suite (Quarkus builds its test applications) with room on the cores beside it;
 * made at the first launch, the archive held that launch back by 11 to 17 s. Surefire discovers the classes one by
 * one before it runs them, the integration tests (package {@code it}) after most {@code @QuarkusTest} ones: waiting
 * for an {@code *IT} started it at the end of the discovery. Registered for the JUnit Platform launcher in {@code
 * META-INF/services}.
 */
public final class EarlyWorkerClassArchive implements LauncherDiscoveryListener {

    @Override
    public void launcherDiscoveryStarted(LauncherDiscoveryRequest request) {
        if (selectsIntegrationTest(request) || EarlyServerStart.selectsQuarkusTest(request)) {
            try {
                WorkerClassArchive.makeInBackground(
                        WorkerProcess.javaCommand(), BuildPaths.workerJar(), WorkerClassArchive.Training.WORKLOAD);
            } catch (IllegalStateException notPackaged) {
                // No packaged worker (a run that did not build it): its integration tests say so themselves.
            }
        }
    }

    /** Whether {@code request} names an integration test class ({@code *IT}), or a method of one. */
    static boolean selectsIntegrationTest(LauncherDiscoveryRequest request) {
        return EarlyServerStart.selectedClassNames(request).anyMatch(name -> name.endsWith("IT"));
    }
}
