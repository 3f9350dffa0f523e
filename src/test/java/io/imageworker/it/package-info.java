/**
 * The integration tests: each runs the packaged worker ({@code target/quarkus-app/quarkus-run.jar}) as a child process
 * against real servers, and is named {@code *IT} so that failsafe runs it after {@code package} (part of
 * {@code ./mvnw verify}). They kill it (WorkerRestartIT, VariantRestartIT), stop it (GracefulShutdownIT), run several
 * (ScaleOutIT, FleetBudgetIT), hold it paused (LongPauseIT), run the fault suite's engine on it (FaultSuiteIT), start
 * it with wrong settings (StartupCheckIT), or read the container image it was packaged into (ContainerImageIT, with
 * {@code -Pimage} only). What they run on is in {@code src/testing/java}: {@link
 * io.imageworker.testing.launch.LaunchStack}, {@link io.imageworker.testing.launch.WorkerProcess}, {@link
 * io.imageworker.testing.launch.PipelineClient}.
 */
package io.imageworker.it;
