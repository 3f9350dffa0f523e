/**
 * The packaged worker ({@code java -jar target/quarkus-app/quarkus-run.jar}) run as a child process against real
 * servers: the local run, the benchmark and the integration tests ({@code *IT}) that need a real process to kill.
 *
 * <ul>
 *   <li>{@link io.imageworker.testing.launch.WorkerProcess}: starts the jar with a given environment, waits for
 *       {@code /q/health/ready}, and kills (SIGKILL), stops (SIGTERM) or restarts it; its output goes to
 *       {@code target/launch-logs/}.
 *   <li>{@link io.imageworker.testing.launch.LocalRun}, {@code ./mvnw -Plocal}: embedded Kafka and S3 (data in
 *       {@code target/local-run/}), the gateway simulator with a 2-5 s latency and the worker; prompts typed in (or
 *       piped, or read from {@code -Dlocal.requests=FILE}) are published, results printed with the image's path on
 *       disk.
 *   <li>{@link io.imageworker.testing.launch.Benchmark}, {@code ./mvnw -Pbench -Dbench.requests=640
 *       -Dbench.concurrency=64 -Dbench.latency-ms=2000}: throughput and latency against a fixed-latency gateway,
 *       compared with the ideal {@code ceil(N / concurrency) x latency}.
 *   <li>{@link io.imageworker.testing.launch.WorkerRestartIT}, part of {@code ./mvnw verify}: a worker killed with
 *       calls in flight and started again loses nothing.
 * </ul>
 *
 * <p>Both Maven profiles package the worker without running the tests, then run their main class in a JVM of its own
 * with the test classpath (exec-maven-plugin {@code exec:exec}, standard streams inherited).
 */
package io.imageworker.testing.launch;
