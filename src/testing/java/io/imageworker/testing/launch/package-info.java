/**
 * The packaged worker ({@code java -jar target/quarkus-app/quarkus-run.jar}) run as a child process against real
 * servers, for the integration tests ({@code io.imageworker.it}, {@code *IT}) and the tools ({@code src/tools/java}:
 * the local run and the benchmark, in this package too).
 *
 * <ul>
 *   <li>{@link io.imageworker.testing.launch.WorkerProcess}: starts the jar with a given environment, waits for
 *       {@code /q/health/ready}, and kills (SIGKILL), stops (SIGTERM) or restarts it; its output goes to
 *       {@code target/launch-logs/}.
 *   <li>{@link io.imageworker.testing.launch.LaunchStack}: what a worker needs around it (the servers, the gateway
 *       simulator, topics and a bucket), the environment that points a worker at it, and what the broker and the
 *       store say afterwards (commits, published events, stored objects).
 *   <li>{@link io.imageworker.testing.launch.PipelineClient}: publishes requests and reads every terminal event, as a
 *       producer and a consumer of the worker would.
 *   <li>{@link io.imageworker.testing.launch.SharedServersFirst}: starts the shared servers before a test class, out
 *       of its tests' timeouts.
 * </ul>
 *
 * <p>The tools' Maven profiles ({@code -Plocal}, {@code -Pbench}, {@code -Pfaults}) package the worker without running
 * the tests, then run their main class in a JVM of its own with the test classpath (exec-maven-plugin
 * {@code exec:exec}, standard streams inherited).
 */
package io.imageworker.testing.launch;
