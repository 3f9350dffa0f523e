/**
 * The integration tests: each runs the packaged worker ({@code target/quarkus-app/quarkus-run.jar}) as a child process
 * against real servers (the JVM's shared ones, beside the unit tests: the worker is packaged before the tests run;
 * {@code -DskipITs} leaves them out). They kill it (WorkerRestartIT, VariantRestartIT), stop it (GracefulShutdownIT), run several
 * (ScaleOutIT, FleetBudgetIT), hold it paused (LongPauseIT), drive its console in a browser (ConsoleBrowserIT), run the fault suite's engine on it (FaultSuiteIT, on servers of its own, which it stops), start
 * it with wrong settings (StartupCheckIT), or read the container image it was packaged into (ContainerImageIT, with
 * {@code -Pimage} only). What they run on is in {@code src/testing/java}: {@link
 * io.imageworker.testing.launch.LaunchStack}, {@link io.imageworker.testing.launch.WorkerProcess}, {@link
 * io.imageworker.testing.launch.PipelineClient}.
 */
package io.imageworker.it;
