package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.infra.Infrastructure;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The chart's KEDA triggers against the lag KEDA computes ({@link KedaKafkaScaler}) on the real broker: a parked topic
 * written in transactions by two replicas (one partition's tail holding both their commit markers) and drained by a
 * {@code read_committed} consumer that commits each record's offset + 1, as the worker does; a request topic written
 * without transactions and drained the same way. The triggers are the chart's, rendered for these topics and group.
 */
class KedaLagTest {

    private static final Path DEFAULTS = HelmChart.DIRECTORY.resolve("ci/default-values.yaml");
    private static final int PARTITIONS = 6;

    private final String bootstrap = Infrastructure.get().kafka().bootstrapServers();
    private final String id = UUID.randomUUID().toString().substring(0, 8);
    private final String request = "keda-request-" + id;
    private final String parked = "keda-parked-" + id;
    private final String group = "keda-group-" + id;
    private final List<AutoCloseable> clients = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable client : clients) {
            client.close();
        }
    }

    @Test
    void aDrainedTransactionalTopicKeepsItsMarkersAsLagAndTheChartsTriggersStillReachZero() throws Exception {
        Infrastructure.get().kafka().createTopics(PARTITIONS, request, parked);
        StrictManifests.ScaledObject chart = scaledObject();
        Map<String, String> requestTrigger = trigger(chart, request);
        Map<String, String> parkedTrigger = trigger(chart, parked);
        // The parked topic's trigger as the chart rendered it before: any lag wakes the release, every partition
        // counts.
        Map<String, String> formerParkedTrigger = new LinkedHashMap<>(parkedTrigger);
        formerParkedTrigger.put("activationLagThreshold", "0");
        formerParkedTrigger.remove("limitToPartitionsWithLag");
        formerParkedTrigger.remove("excludePersistentLag");
        int min = chart.spec().minReplicaCount();
        int max = chart.spec().maxReplicaCount();
        assertThat(min).as("scaled to zero in this test").isZero();

        // Two replicas park into partition 0 at once (its tail: a record of each, then both markers); one parks
        // into every other partition; a producer writes the request topic without transactions.
        try (KafkaProducer<byte[], byte[]> first = transactional("a");
                KafkaProducer<byte[], byte[]> second = transactional("b");
                KafkaProducer<byte[], byte[]> plain = producer(Map.of())) {
            first.beginTransaction();
            second.beginTransaction();
            first.send(record(parked, 0, "a-0")).get();
            second.send(record(parked, 0, "b-0")).get();
            for (int partition = 1; partition < PARTITIONS; partition++) {
                first.send(record(parked, partition, "a-" + partition)).get();
            }
            first.commitTransaction();
            second.commitTransaction();
            for (int partition = 0; partition < PARTITIONS; partition++) {
                plain.send(record(request, partition, "r-" + partition)).get();
            }
        }
        drain(parked, Map.of());
        drain(request, Map.of());

        Admin admin = admin();
        KedaKafkaScaler requestScaler = new KedaKafkaScaler(KedaKafkaScaler.Trigger.of(requestTrigger));
        KedaKafkaScaler parkedScaler = new KedaKafkaScaler(KedaKafkaScaler.Trigger.of(parkedTrigger));
        KedaKafkaScaler formerScaler = new KedaKafkaScaler(KedaKafkaScaler.Trigger.of(formerParkedTrigger));
        KedaKafkaScaler.Reading requestLag = requestScaler.look(admin);
        KedaKafkaScaler.Reading parkedLag = parkedScaler.look(admin);
        KedaKafkaScaler.Reading formerLag = formerScaler.look(admin);

        // Drained, yet every parked partition keeps its markers: 2 on partition 0, 1 on the others.
        assertThat(parkedLag.lags()).containsEntry(0, 2L);
        assertThat(parkedLag.lags())
                .allSatisfy((partition, lag) -> assertThat(lag).isPositive());
        assertThat(parkedLag.lagWithPersistent()).isEqualTo(PARTITIONS + 1L);
        assertThat(requestLag.lagWithPersistent()).isZero();
        // Before: the markers keep the release active, at one pod at least, for good.
        assertThat(formerLag.active()).isTrue();
        assertThat(KedaKafkaScaler.replicas(Map.of(requestScaler, requestLag, formerScaler, formerLag), min, max))
                .isEqualTo(1);
        // Now: the markers stay under the parked trigger's activation (partitions x maxReplicaCount), so the release
        // goes to zero.
        assertThat(parkedScaler.trigger().activationLagThreshold()).isEqualTo((long) PARTITIONS * max);
        assertThat(parkedLag.active()).isFalse();
        assertThat(KedaKafkaScaler.replicas(Map.of(requestScaler, requestLag, parkedScaler, parkedLag), min, max))
                .isZero();
        // And from KEDA's second look on, a partition whose offset did not move adds nothing to the metric.
        assertThat(parkedScaler.look(admin).metric()).isZero();

        // One producer's backlog, parked into partition 1, read back in part: before, KEDA asked for every pod; now
        // for the one pod that can read that partition.
        int backlog = 400;
        try (KafkaProducer<byte[], byte[]> first = transactional("c")) {
            first.beginTransaction();
            for (int i = 0; i < backlog; i++) {
                first.send(record(parked, 1, "backlog-" + i));
            }
            first.commitTransaction();
        }
        drain(parked, Map.of(1, 100));
        KedaKafkaScaler.Reading backlogLag = parkedScaler.look(admin);
        KedaKafkaScaler.Reading formerBacklogLag = formerScaler.look(admin);
        assertThat(backlogLag.active()).isTrue();
        assertThat(KedaKafkaScaler.replicas(
                        Map.of(requestScaler, requestScaler.look(admin), parkedScaler, backlogLag), min, max))
                .isEqualTo(1);
        assertThat(KedaKafkaScaler.replicas(
                        Map.of(requestScaler, requestScaler.look(admin), formerScaler, formerBacklogLag), min, max))
                .isEqualTo(max);

        // Intake paused: the backlog's offset stops moving. The trigger stays active (the release keeps its pod) but
        // asks for no pod for it.
        KedaKafkaScaler.Reading pausedLag = parkedScaler.look(admin);
        assertThat(pausedLag.active()).isTrue();
        assertThat(pausedLag.metric()).isZero();
        System.out.printf(
                "KEDA lag of a drained transactional topic of %d partitions: %d (per partition %s), activation now %d;"
                        + " release before %d pod(s), now 0; a backlog of %d in one partition: before %d pods, now 1%n",
                PARTITIONS,
                parkedLag.lagWithPersistent(),
                parkedLag.lags(),
                parkedScaler.trigger().activationLagThreshold(),
                1,
                backlog - 100,
                max);
    }

    /** The chart's ScaledObject for this test's topics and group, scaled to zero. */
    private StrictManifests.ScaledObject scaledObject() {
        return HelmChart.render(
                        DEFAULTS,
                        Map.of(
                                "keda.enabled", true,
                                "keda.minReplicaCount", 0,
                                "topics.partitions", PARTITIONS,
                                "kafka.bootstrapServers", bootstrap,
                                "kafka.consumerGroup", group,
                                "kafka.topics.request", request,
                                "kafka.topics.requestParked", parked))
                .one(StrictManifests.ScaledObject.class);
    }

    private static Map<String, String> trigger(StrictManifests.ScaledObject scaler, String topic) {
        return scaler.spec().triggers().stream()
                .map(StrictManifests.ScaledObject.Trigger::metadata)
                .filter(metadata -> metadata.get("topic").equals(topic))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no trigger on " + topic));
    }

    /**
     * Reads {@code topic} as the worker's group does ({@code read_committed}) and commits each record's offset + 1,
     * as the worker does: every record, or the first {@code limits} records of the partitions named there.
     */
    private void drain(String topic, Map<Integer, Integer> limits) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int partition = 0; partition < PARTITIONS; partition++) {
                partitions.add(new TopicPartition(topic, partition));
            }
            consumer.assign(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
            Map<Integer, Integer> taken = new HashMap<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (partitions.stream().anyMatch(p -> consumer.position(p) < ends.get(p))) {
                assertThat(System.nanoTime()).as("read %s to its end", topic).isLessThan(deadline);
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    int count = taken.merge(record.partition(), 1, Integer::sum);
                    if (count <= limits.getOrDefault(record.partition(), Integer.MAX_VALUE)) {
                        commits.put(
                                new TopicPartition(topic, record.partition()),
                                new OffsetAndMetadata(record.offset() + 1));
                    }
                }
            }
            consumer.commitSync(commits);
        }
    }

    private KafkaProducer<byte[], byte[]> transactional(String name) {
        KafkaProducer<byte[], byte[]> producer =
                producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "keda-lag-" + id + "-" + name));
        producer.initTransactions();
        return producer;
    }

    private KafkaProducer<byte[], byte[]> producer(Map<String, Object> extra) {
        Map<String, Object> config = new HashMap<>(extra);
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        return new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private Admin admin() {
        Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
        clients.add(admin);
        return admin;
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, int partition, String value) {
        return new ProducerRecord<>(topic, partition, null, value.getBytes(StandardCharsets.UTF_8));
    }
}
