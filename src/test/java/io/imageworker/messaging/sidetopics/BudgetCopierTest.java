package io.imageworker.messaging.sidetopics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.imageworker.config.TopicSettings;
import io.imageworker.contract.Billing.CallCost;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.support.Pauses;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.imageworker.testing.infra.Infrastructure;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 48, item 1: a writer of the budget topic that copies what it reads cannot let the fleet call beyond its cap.
 * Two replicas (two spend guards, each on its own budget log, on a real broker) share a cap of {@value #CAP} calls;
 * beside them a copier reads the topic and, for every record it reads, writes back what the records allow: each claim
 * as a release (naming the claim's writer, as it reads), as a release whose secret is the claim's id, and with a
 * made-up secret; each release again, the released claim again, and the release once more. Twelve requests come,
 * every third call allowed ends refused by the gateway before any billing (a 429: its place is given back). Before
 * the claims had secrets, every copied release freed its claim's place: all twelve were allowed, eight billed.
 */
class BudgetCopierTest {

    private static final int CAP = 4;
    private static final int REQUESTS = 12;
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    /** The test's own records, which tell when a log has read everything before them: in a scope with no cap. */
    private static final String SYNC = "test-sync";
    /** The key of the copier's records, so that it does not copy its own. */
    private static final String COPIER = "copier";

    private final String bootstrap = Infrastructure.get().kafka().bootstrapServers();
    private final String topic = "image-worker-budget-" + UUID.randomUUID();
    private final List<KafkaBudgetLog> logs = new ArrayList<>();
    private final AtomicLong syncs = new AtomicLong();
    private Copier copier;

    @AfterEach
    void stop() throws InterruptedException {
        logs.forEach(KafkaBudgetLog::stop);
        if (copier != null) {
            copier.stop();
        }
    }

    @Test
    void aWriterThatCopiesTheBudgetLogCannotLetTwoReplicasCallBeyondTheCap() throws Exception {
        Infrastructure.get().kafka().createTopics(1, topic);
        copier = new Copier();
        copier.start();
        BudgetGuard first = guard();
        BudgetGuard second = guard();

        int billed = 0;
        int givenBack = 0;
        int refused = 0;
        for (int i = 0; i < REQUESTS; i++) {
            BudgetGuard guard = i % 2 == 0 ? first : second;
            BudgetGuard.Reservation reservation = guard.reserve().await().atMost(PATIENCE);
            if (!reservation.granted()) {
                refused++;
            } else if ((billed + givenBack) % 3 == 2) {
                guard.settle(reservation, CallCost.REFUSED);
                givenBack++;
            } else {
                guard.settle(reservation, CallCost.BILLED);
                billed++;
            }
            everythingCopiedAndRead();
        }

        assertThat(copier.copied()).as("the copier did copy").isGreaterThan(REQUESTS);
        assertThat(billed).as("calls billed by the two replicas").isLessThanOrEqualTo(CAP);
        assertThat(billed)
                .as("the replicas' own releases still gave their places back, the copier's changed nothing")
                .isEqualTo(CAP);
        assertThat(givenBack).isEqualTo(1);
        assertThat(refused).isEqualTo(REQUESTS - CAP - givenBack);
        for (KafkaBudgetLog log : logs) {
            assertThat(log.used(window()))
                    .as("places held, as each replica reads them")
                    .isEqualTo(CAP);
        }
    }

    /**
     * Waits until every record the replicas wrote is in the topic, the copier has copied it, and both replicas have
     * read the copies: each log writes a claim of its own in a scope without a cap and waits for it to be read back
     * (its producer keeps its records in order, so its releases are in the topic before it), the copier reads to the
     * end, and each log writes one more.
     */
    private void everythingCopiedAndRead() {
        sync();
        long end = endOffset();
        await().atMost(PATIENCE).until(() -> copier.position() >= end);
        sync();
    }

    private void sync() {
        for (KafkaBudgetLog log : logs) {
            assertThat(log.claim(SYNC, "sync-" + syncs.incrementAndGet(), window(), 1)
                            .await()
                            .atMost(PATIENCE))
                    .isTrue();
        }
    }

    private long endOffset() {
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(
                Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            return consumer.endOffsets(List.of(partition)).get(partition);
        }
    }

    /** The current window of ten years: no window ends during the test. */
    private static long window() {
        return System.currentTimeMillis() / Duration.ofDays(3650).toMillis();
    }

    /** A replica's spend guard on a budget log of its own (its own writer id), failing the calls over the cap. */
    private BudgetGuard guard() {
        Map<String, String> properties = Map.of(
                "image-worker.topic.budget",
                topic,
                "image-worker.budget.window",
                "3650d",
                "image-worker.budget.max-calls",
                Integer.toString(CAP),
                "image-worker.budget.on-exceeded",
                "fail");
        TopicSettings topics = TestConfig.settings(TopicSettings.class, properties);
        BudgetSettings budget = TestConfig.settings(BudgetSettings.class, properties);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        KafkaBudgetLog log = new KafkaBudgetLog(
                topics,
                budget,
                Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                new ObjectMapper(),
                registry,
                settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer()),
                System::nanoTime,
                Duration.ofMillis(100),
                new WorkerThreads());
        logs.add(log);
        log.start();
        return new BudgetGuard(budget, registry, System::currentTimeMillis, new Pauses(System::nanoTime), log);
    }

    /**
     * A writer of the budget topic that is not a worker: it reads every record and writes back the copies the records
     * make possible, waiting for each to be written before it moves on ({@link #position()}).
     */
    private final class Copier {
        private final ObjectMapper json = new ObjectMapper();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicLong position = new AtomicLong();
        private final AtomicLong copied = new AtomicLong();
        private final Thread thread = new Thread(this::run, "budget-copier");

        void start() {
            thread.start();
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join(PATIENCE.toMillis());
        }

        /** The offset before which every record is copied, its copies written. */
        long position() {
            return position.get();
        }

        long copied() {
            return copied.get();
        }

        private void run() {
            TopicPartition partition = new TopicPartition(topic, 0);
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(
                            Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                            new ByteArrayDeserializer(),
                            new ByteArrayDeserializer());
                    KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                            Map.of(
                                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                                    bootstrap,
                                    ProducerConfig.ACKS_CONFIG,
                                    "all"),
                            new ByteArraySerializer(),
                            new ByteArraySerializer())) {
                consumer.assign(List.of(partition));
                consumer.seekToBeginning(List.of(partition));
                while (running.get()) {
                    List<Future<?>> written = new ArrayList<>();
                    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                        for (ObjectNode copy : copies(record)) {
                            written.add(producer.send(
                                    new ProducerRecord<>(topic, 0, null, bytes(COPIER), json.writeValueAsBytes(copy))));
                        }
                    }
                    for (Future<?> future : written) {
                        future.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
                    }
                    copied.addAndGet(written.size());
                    position.set(consumer.position(partition));
                }
            } catch (Exception e) {
                throw new IllegalStateException("the copier failed", e);
            }
        }

        /** What a writer who reads {@code record} can write back with it. */
        private List<ObjectNode> copies(ConsumerRecord<byte[], byte[]> record) throws Exception {
            if (record.key() != null && COPIER.equals(new String(record.key(), StandardCharsets.UTF_8))) {
                return List.of();
            }
            ObjectNode read = (ObjectNode) json.readTree(record.value());
            if (SYNC.equals(read.path("scope").asText(null))) {
                return List.of();
            }
            List<ObjectNode> copies = new ArrayList<>();
            if ("CLAIM".equals(read.path("kind").asText())) {
                // The claim as its writer's release: the old format needed nothing more.
                copies.add(read.deepCopy().put("kind", "RELEASE"));
                // With the claim's id, or any other made-up value, as the secret.
                copies.add(read.deepCopy()
                        .put("kind", "RELEASE")
                        .put("secret", read.path("claim").asText()));
                copies.add(read.deepCopy().put("kind", "RELEASE").put("secret", "0".repeat(32)));
            } else {
                // A release again; the claim it released claimed again, and released again with the release's proof.
                copies.add(read.deepCopy());
                copies.add(read.deepCopy().put("kind", "CLAIM"));
                copies.add(read.deepCopy());
            }
            return copies;
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
