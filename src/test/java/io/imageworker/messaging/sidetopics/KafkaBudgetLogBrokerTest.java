package io.imageworker.messaging.sidetopics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.TopicSettings;
import io.imageworker.spend.BudgetLedger;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.imageworker.testing.infra.Infrastructure;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The budget log on a real broker, its reader failing on a record the way a real client fails (a record it cannot
 * read): a new reader takes over at that record, and the claim waiting behind it is decided, once.
 */
class KafkaBudgetLogBrokerTest {

    private static final Duration WINDOW = Duration.ofHours(1);

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    /** Armed, the next record read fails to be read, once. */
    private final AtomicBoolean failNext = new AtomicBoolean();

    private KafkaBudgetLog log;

    @AfterEach
    void stop() {
        if (log != null) {
            log.stop();
        }
    }

    @Test
    void aReaderThatCannotReadARecordRestartsAtItAndTheClaimBehindItIsDecided() {
        String topic = "image-worker-budget-" + UUID.randomUUID();
        log = new KafkaBudgetLog(
                TestConfig.settings(TopicSettings.class, capOfOne(topic)),
                TestConfig.settings(BudgetSettings.class, capOfOne(topic)),
                Map.of(
                        CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                        Infrastructure.get().kafka().bootstrapServers()),
                new ObjectMapper(),
                registry,
                settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new FailingWhenArmed()),
                System::nanoTime,
                Duration.ofMillis(100),
                new WorkerThreads());
        log.start();
        long window = System.currentTimeMillis() / WINDOW.toMillis();

        assertThat(log.claim("first", window, 1).await().atMost(Duration.ofSeconds(30)))
                .isTrue();

        failNext.set(true);
        Boolean second = log.claim("second", window, 1).await().atMost(Duration.ofSeconds(30));

        assertThat(second).as("refused: the first holds the only place").isFalse();
        assertThat(failNext).as("the record did fail once").isFalse();
        assertThat(registry.get("image_worker_budget_reader_restarts").counter().count())
                .isEqualTo(1);
        assertThat(log.used(window)).isEqualTo(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> log.stall().isEmpty());
    }

    @Test
    void aClaimWrittenWhileTheReaderFindsItsStartIsNotSteppedOver() throws Exception {
        String topic = "image-worker-budget-" + UUID.randomUUID();
        String bootstrap = Infrastructure.get().kafka().bootstrapServers();
        long window = System.currentTimeMillis() / WINDOW.toMillis();
        byte[] claim = new ObjectMapper()
                .writeValueAsBytes(new KafkaBudgetLog.Record(BudgetLedger.Kind.CLAIM, "early", window, 1, "another"));
        AtomicBoolean written = new AtomicBoolean();
        log = new KafkaBudgetLog(
                TestConfig.settings(TopicSettings.class, capOfOne(topic)),
                TestConfig.settings(BudgetSettings.class, capOfOne(topic)),
                Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                new ObjectMapper(),
                registry,
                settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer()) {
                    @Override
                    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
                            Map<TopicPartition, Long> timestamps) {
                        Map<TopicPartition, OffsetAndTimestamp> found = super.offsetsForTimes(timestamps);
                        // Another replica's claim lands right after the search found nothing in the window.
                        if (written.compareAndSet(false, true)) {
                            write(bootstrap, topic, claim);
                        }
                        return found;
                    }
                },
                System::nanoTime,
                Duration.ofMillis(100),
                new WorkerThreads());
        log.start();

        await().atMost(Duration.ofSeconds(30)).until(() -> log.used(window) == 1);
        assertThat(written).isTrue();
    }

    @Test
    void producerScopesShareTheTopicApartFromTheFleetAndAReplicaStartingLaterReadsTheirLongerWindows()
            throws Exception {
        String topic = "image-worker-budget-" + UUID.randomUUID();
        String bootstrap = Infrastructure.get().kafka().bootstrapServers();
        // The fleet's windows are of a minute, producer a's of ten years (the current one began in December 2019).
        Map<String, String> settings = Map.of(
                "image-worker.topic.budget", topic,
                "image-worker.budget.window", "1m",
                "image-worker.budget.max-calls", "5",
                "image-worker.budget.per-producer", "a=2/3650d");
        long aWindow = System.currentTimeMillis() / Duration.ofDays(3650).toMillis();
        long fleetWindow = System.currentTimeMillis() / Duration.ofMinutes(1).toMillis();
        ObjectMapper json = new ObjectMapper();
        // A claim of a's written ten minutes ago, long before the fleet's current window, by another replica.
        write(
                bootstrap,
                topic,
                System.currentTimeMillis() - Duration.ofMinutes(10).toMillis(),
                json.writeValueAsBytes(
                        new KafkaBudgetLog.Record(BudgetLedger.Kind.CLAIM, "old", aWindow, 2, "another", "a")));
        // A record written before scopes existed: the fleet's.
        byte[] fleetRecord = json.writeValueAsBytes(
                new KafkaBudgetLog.Record(BudgetLedger.Kind.CLAIM, "fleet-1", fleetWindow, 5, "an-older-replica"));
        assertThat(new String(fleetRecord, java.nio.charset.StandardCharsets.UTF_8))
                .doesNotContain("scope");
        write(bootstrap, topic, System.currentTimeMillis(), fleetRecord);
        log = brokerLog(settings, bootstrap);
        log.start();

        await().atMost(Duration.ofSeconds(30)).until(() -> log.used("a", aWindow) == 1 && log.used(fleetWindow) == 1);
        assertThat(log.claim("a", BudgetLedger.claimOf("new"), aWindow, 2)
                        .await()
                        .atMost(Duration.ofSeconds(30)))
                .isTrue();
        assertThat(log.claim("a", "one-too-many", aWindow, 2).await().atMost(Duration.ofSeconds(30)))
                .isFalse();
        // A producer without a cap here (another replica's setting): its claims hold no place here.
        assertThat(log.claim("b", "b-1", fleetWindow, 1).await().atMost(Duration.ofSeconds(30)))
                .as("no cap here")
                .isTrue();
        assertThat(log.used("b", fleetWindow)).isZero();
        log.release("a", "new", aWindow);
        await().atMost(Duration.ofSeconds(30)).until(() -> log.used("a", aWindow) == 1);
        assertThat(log.used(fleetWindow)).isEqualTo(1);

        KafkaBudgetLog later = brokerLog(settings, bootstrap);
        try {
            later.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> later.used("a", aWindow) == 1);
            assertThat(later.used(fleetWindow)).isEqualTo(1);
        } finally {
            later.stop();
        }
    }

    /** A fleet's cap of one call per hour, on {@code topic}. */
    private static Map<String, String> capOfOne(String topic) {
        return Map.of(
                "image-worker.topic.budget",
                topic,
                "image-worker.budget.window",
                "1h",
                "image-worker.budget.max-calls",
                "1");
    }

    private KafkaBudgetLog brokerLog(Map<String, String> settings, String bootstrap) {
        return new KafkaBudgetLog(
                TestConfig.settings(TopicSettings.class, settings),
                TestConfig.settings(BudgetSettings.class, settings),
                Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                new ObjectMapper(),
                registry,
                config -> new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer()),
                System::nanoTime,
                Duration.ofMillis(100),
                new WorkerThreads());
    }

    private static void write(String bootstrap, String topic, byte[] value) {
        write(bootstrap, topic, null, value);
    }

    private static void write(String bootstrap, String topic, Long timestamp, byte[] value) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, 0, timestamp, null, value))
                    .get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Reads values as they are, except the first one read after {@link #failNext} is armed. */
    private final class FailingWhenArmed implements Deserializer<byte[]> {
        @Override
        public byte[] deserialize(String topic, byte[] data) {
            if (failNext.compareAndSet(true, false)) {
                throw new SerializationException("an unreadable record, for the test");
            }
            return data;
        }
    }
}
