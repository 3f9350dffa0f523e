package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.PartitionWork;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.reactive.messaging.kafka.companion.ConsumerTask;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A rebalance that takes partitions away from the worker while requests on them are in progress: the worker lets those
 * with a gateway call in flight finish within its rebalance grace and commits them before the partitions go, so the new
 * owner (here a plain consumer joining the worker's group, as another replica would) gets none of them; those still
 * waiting for their first call make none here and go to the new owner at once. No request is called or answered twice.
 * Shares {@link HostileCorpusResource}'s worker: a topic of six partitions and a group of their own.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(HostileCorpusResource.class)
class RevocationGraceTest extends PipelineTestSupport {

    /** The worker's concurrency is 4: twice that is in progress at most, half of it waiting for a call slot. */
    private static final int IN_PROGRESS = 8;

    @Inject
    PartitionWork work;

    @Inject
    InFlight inFlight;

    @Test
    void requestsCalledOnARevokedPartitionFinishAndCommitBeforeTheNewOwnerTakesItTheOthersGoToIt() throws Exception {
        // A first request on every partition: the worker's commit strategy reads a partition's commit when its first
        // record arrives, one partition at a time, which would spread the requests below over seconds.
        List<String> warmUp = send(HostileCorpusResource.PARTITIONS, "warm");
        warmUp.forEach(PipelineTestSupport::result);
        // Calls slow enough that the rebalance comes while every request is in progress.
        gateway.control().setLatency(Duration.ofSeconds(3));
        List<String> ids = send(IN_PROGRESS, "grace");
        await("every request in progress").atMost(WITHIN).until(() -> inFlight.count() == IN_PROGRESS);

        Set<TopicPartition> assigned = ConcurrentHashMap.newKeySet();
        Set<String> received = ConcurrentHashMap.newKeySet();
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

            // Before it got them, the worker finished, published and committed the requests it had called for on
            // them; it called for none of the others there, and never will.
            List<String> moved = ids.stream()
                    .filter(id -> assigned.contains(partitionOf(ids, id)))
                    .toList();
            List<String> called =
                    moved.stream().filter(id -> !callsFor(id).isEmpty()).toList();
            List<String> handedOver =
                    moved.stream().filter(id -> callsFor(id).isEmpty()).toList();
            assertThat(moved).as("requests on the partitions that moved").isNotEmpty();
            for (String id : called) {
                assertThat(kafka.results(id))
                        .as("events of %s, called before the hand-off", id)
                        .hasSize(1);
            }
            for (String id : handedOver) {
                assertThat(kafka.results(id))
                        .as("events of %s, handed over", id)
                        .isEmpty();
            }
            // The new owner gets exactly the requests with no call made: polling from the commits finds them, and
            // none of those called here.
            await("the new owner to receive the requests handed over")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> {
                        owner.getRecords().stream()
                                .filter(record -> record.key() != null)
                                .forEach(record -> received.add(new String(record.key(), StandardCharsets.UTF_8)));
                        return received.containsAll(handedOver);
                    });
            assertThat(received).as("requests the new owner received").doesNotContainAnyElementsOf(called);
            // Whatever did not move runs to its end here, each with one call and one event.
            for (String id : ids) {
                if (!moved.contains(id)) {
                    result(id);
                }
                assertThat(callsFor(id)).as("calls of %s", id).hasSizeLessThanOrEqualTo(1);
                assertThat(kafka.results(id)).as("events of %s", id).hasSizeLessThanOrEqualTo(1);
            }
            for (String id : handedOver) {
                assertThat(callsFor(id)).as("calls of %s, handed over", id).isEmpty();
                assertThat(kafka.results(id))
                        .as("events of %s, handed over", id)
                        .isEmpty();
            }
        }
        // The new owner left: the worker takes its partitions back before the next test.
        await("the partitions back with the worker").atMost(WITHIN).until(() -> java.util.stream.IntStream.range(
                        0, HostileCorpusResource.PARTITIONS)
                .allMatch(partition -> work.takes(new TopicPartition(HostileCorpusResource.TOPIC, partition))));
    }

    /** The partition {@link #send} put request {@code id} on. */
    private static TopicPartition partitionOf(List<String> ids, String id) {
        return new TopicPartition(HostileCorpusResource.TOPIC, ids.indexOf(id) % HostileCorpusResource.PARTITIONS);
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
