package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.testing.KafkaOffsets;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.reactive.messaging.kafka.companion.ConsumerTask;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

/**
 * A rebalance that takes partitions away from the worker while requests on them are in progress: the worker lets them
 * finish within its rebalance grace and commits them before the partitions go, so the new owner (here a plain consumer
 * joining the worker's group, as another replica would) gets none of them, and no request is called or answered twice.
 * Shares {@link HostileCorpusResource}'s worker: a topic of six partitions and a group of their own.
 */
@QuarkusTest
@WithTestResource(HostileCorpusResource.class)
class RevocationGraceTest extends PipelineTestSupport {

    /** The worker's concurrency is 4: twice that is in progress at most, half of it waiting for a call slot. */
    private static final int IN_PROGRESS = 8;

    @Inject
    PartitionWork work;

    @Test
    void requestsInProgressOnARevokedPartitionFinishAndCommitBeforeTheNewOwnerTakesIt() throws Exception {
        // A first request on every partition: the worker's commit strategy reads a partition's commit when its first
        // record arrives, one partition at a time, which would spread the requests below over seconds.
        List<String> warmUp = send(HostileCorpusResource.PARTITIONS, "warm");
        warmUp.forEach(PipelineTestSupport::result);
        // Calls slow enough that the rebalance comes while every request is in progress.
        gateway.control().setLatency(Duration.ofSeconds(3));
        List<String> ids = send(IN_PROGRESS, "grace");
        await("every request in progress").atMost(WITHIN).until(() -> work.running() == IN_PROGRESS);

        Set<TopicPartition> assigned = ConcurrentHashMap.newKeySet();
        // A consumer joining the worker's group as another replica would.
        try (ConsumerTask<byte[], byte[]> owner = kafka.kafka()
                .consumeWithDeserializers(new ByteArrayDeserializer(), new ByteArrayDeserializer())
                .withGroupId(HostileCorpusResource.GROUP)
                .withClientId("new-owner")
                .withProp(
                        ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName())
                .withOnPartitionsAssigned(assigned::addAll)
                .withOnPartitionsRevoked(assigned::removeAll)
                .fromTopics(HostileCorpusResource.TOPIC)) {
            await("the new owner assigned partitions")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> !assigned.isEmpty());

            // Before it got them, the worker finished and committed what it had started on them.
            Map<TopicPartition, Long> movedEnds =
                    new HashMap<>(KafkaOffsets.endOffsets(kafka.kafka(), HostileCorpusResource.TOPIC));
            movedEnds.keySet().retainAll(assigned);
            assertThat(KafkaOffsets.committedUpTo(kafka.kafka(), HostileCorpusResource.GROUP, movedEnds))
                    .as("partitions %s committed to their ends %s", assigned, movedEnds)
                    .isTrue();
            for (String id : ids) {
                assertThat(kafka.results(id)).as("events of %s", id).hasSize(1);
                assertThat(callsFor(id)).as("calls of %s", id).hasSize(1);
            }
            // And it gets none of those records: polling from the commits finds nothing of them.
            await("the new owner to poll")
                    .during(Duration.ofSeconds(2))
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> owner.getRecords().stream()
                            .noneMatch(record -> record.key() != null
                                    && ids.contains(new String(record.key(), StandardCharsets.UTF_8))));
        }
        assertThat(kafka.results(ids.get(0)).get(0).topic()).isEqualTo("image-completed");
        // The new owner left: the worker takes its partitions back before the next test.
        await("the partitions back with the worker").atMost(WITHIN).until(() -> java.util.stream.IntStream.range(
                        0, HostileCorpusResource.PARTITIONS)
                .allMatch(partition -> work.takes(new TopicPartition(HostileCorpusResource.TOPIC, partition))));
    }

    /** Sends {@code count} requests over every partition in turn, keyed by their ids. */
    private static List<String> send(int count, String name) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String id = newId(name);
            ids.add(id);
            kafka.send(new ProducerRecord<>(
                    HostileCorpusResource.TOPIC,
                    i % HostileCorpusResource.PARTITIONS,
                    id.getBytes(StandardCharsets.UTF_8),
                    request(id, "").getBytes(StandardCharsets.UTF_8)));
        }
        return ids;
    }
}
