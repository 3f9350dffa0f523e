package io.imageworker.testing.infra;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.TopicExistsException;

/** What the infrastructure asks of any Kafka cluster, whichever way it runs: is it up, and topic creation. */
final class KafkaAdmin {

    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    private KafkaAdmin() {}

    /** An admin client with short timeouts, so that a down broker is noticed in seconds. */
    static Admin admin(String bootstrapServers) {
        return Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                AdminClientConfig.CLIENT_ID_CONFIG,
                "image-worker-test-infra",
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                5_000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                10_000));
    }

    /**
     * Waits until the cluster answers a describe-cluster request with at least one broker.
     *
     * @param alive false as soon as the server cannot come up any more (its process exited): fails at once
     * @param diagnostics what to add to the failure message (where the log is)
     * @throws IllegalStateException when the cluster does not answer within {@code timeout}
     */
    static void awaitReady(
            String bootstrapServers, Duration timeout, BooleanSupplier alive, Supplier<String> diagnostics) {
        String first = bootstrapServers.split(",")[0].strip();
        String host = first.substring(0, first.lastIndexOf(':'));
        int port = Integer.parseInt(first.substring(first.lastIndexOf(':') + 1));
        String server = "Kafka at " + bootstrapServers;
        // The port first: a plain connect is quiet, where an admin client logs every refused connection.
        Readiness.poll(
                server, "listening", timeout, Duration.ofMillis(100), alive, diagnostics, () -> accepts(host, port));
        try (Admin admin = admin(bootstrapServers)) {
            Readiness.poll(
                    server,
                    "describing its cluster",
                    timeout,
                    Duration.ofMillis(200),
                    alive,
                    diagnostics,
                    () -> !admin.describeCluster()
                            .nodes()
                            .get(5, TimeUnit.SECONDS)
                            .isEmpty());
        }
    }

    /**
     * Creates each topic that does not exist yet, with {@code partitions} partitions and one replica, and waits until
     * every partition of each has a leader in the broker's metadata. The controller accepts a topic before the broker
     * leads its partitions: a producer that wrote at once met NOT_LEADER_OR_FOLLOWER, then OUT_OF_ORDER_SEQUENCE_NUMBER
     * for the batches behind, and retried them until its delivery timeout (HostileSideTopicsTest, 120,000 records right
     * after the topic's creation on a busy broker, November 2026).
     */
    static void createTopics(String bootstrapServers, int partitions, String... names) {
        List<NewTopic> topics = Arrays.stream(names)
                .map(name -> new NewTopic(name, partitions, (short) 1))
                .toList();
        try (Admin admin = admin(bootstrapServers)) {
            for (Map.Entry<String, KafkaFuture<Void>> created :
                    admin.createTopics(topics).values().entrySet()) {
                try {
                    created.getValue().get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw new IllegalStateException("Cannot create topic " + created.getKey(), e.getCause());
                    }
                }
            }
            awaitLeaders(bootstrapServers, admin, List.of(names));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while creating topics", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("Kafka at " + bootstrapServers + " did not create topics in time", e);
        }
    }

    /**
     * Waits until each partition of {@code topics} has a leader, as the broker's metadata tells it, and that leader
     * serves it: its end offset is listed. The metadata names the leader before the broker has made the partition's
     * log: 120,000 records written in that window met {@code NOT_LEADER_OR_FOLLOWER}, and the idempotent producer's
     * retries then {@code OUT_OF_ORDER_SEQUENCE_NUMBER} until its delivery timeout, on a broker busy with the
     * integration tests beside (November 2026).
     */
    private static void awaitLeaders(String bootstrapServers, Admin admin, List<String> topics) {
        Readiness.poll(
                "Kafka at " + bootstrapServers,
                "leading and serving every partition of " + topics,
                CALL_TIMEOUT,
                Duration.ofMillis(50),
                () -> true,
                () -> "",
                // Not known to the broker yet (UnknownTopicOrPartitionException), or not led there yet
                // (NotLeaderOrFollowerException), counts as not yet.
                () -> {
                    Map<TopicPartition, OffsetSpec> partitions = new HashMap<>();
                    for (TopicDescription topic : admin.describeTopics(topics)
                            .allTopicNames()
                            .get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                            .values()) {
                        for (TopicPartitionInfo partition : topic.partitions()) {
                            if (partition.leader() == null || partition.leader().isEmpty()) {
                                return false;
                            }
                            partitions.put(
                                    new TopicPartition(topic.name(), partition.partition()), OffsetSpec.latest());
                        }
                    }
                    admin.listOffsets(partitions).all().get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                    return true;
                });
    }

    private static boolean accepts(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
