/**
 * The real servers the tests talk to: a Kafka cluster and an S3-compatible store, behind {@link
 * io.imageworker.testing.infra.ManagedKafka} and {@link io.imageworker.testing.infra.ManagedStore}.
 *
 * <p>{@link io.imageworker.testing.infra.Infrastructure#get()} is the one entry point for tests. Per server it uses,
 * in order: a running server named by the environment ({@code KAFKA_BOOTSTRAP_SERVERS}; {@code
 * IMAGE_WORKER_STORAGE_ENDPOINT} with {@code AWS_ACCESS_KEY_ID}/{@code AWS_SECRET_ACCESS_KEY}), Testcontainers
 * ({@code apache/kafka}, MinIO) where a Docker engine answers, else an embedded server in a child JVM: {@link
 * io.imageworker.testing.infra.KafkaBroker} (KRaft, broker and controller in one process) and {@link
 * io.imageworker.testing.infra.S3Server} (S3Proxy over a directory). {@code -Dimage-worker.test.infra=embedded} or
 * {@code IMAGE_WORKER_TEST_INFRA=embedded} skips Docker.
 *
 * <p>Embedded servers:
 *
 * <ul>
 *   <li>run in JVMs of their own, because their libraries clash with Quarkus; the build writes each one's classpath
 *       to {@code target/infra/kafka.classpath} and {@code target/infra/s3proxy.classpath} (see the {@code
 *       maven-dependency-plugin} executions in {@code pom.xml});
 *   <li>write their output to {@code target/infra-logs/kafka-<port>.log} and {@code s3proxy-<port>.log}; a server
 *       that fails to start is reported with the end of its log;
 *   <li>listen on 127.0.0.1 only, on ports that stay the same across {@code stop()}/{@code start()}, so fault tests
 *       can take them down and bring them back with their data;
 *   <li>end with the JVM that started them, even when it is killed ({@link
 *       io.imageworker.testing.infra.ParentWatch}).
 * </ul>
 *
 * <p>Each server is one class per mode over what it has in common with the other server in that mode: {@link
 * io.imageworker.testing.infra.EmbeddedServer} (the child JVM's lifecycle, its data and configuration directories),
 * {@link io.imageworker.testing.infra.ContainerServer} (Docker stop, start and kill of a Testcontainers container) and
 * {@link io.imageworker.testing.infra.ExternalServer} (a server the tests may not stop); {@link
 * io.imageworker.testing.infra.ManagedServer} is what every one offers.
 *
 * <p>{@link io.imageworker.testing.infra.Infrastructure#startEmbedded(java.nio.file.Path)} starts both with their data
 * kept in a directory, for a local run of the worker.
 */
package io.imageworker.testing.infra;
