package io.imageworker.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.gateway.BudgetLedger;
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
                TestConfig.worker(Map.of("image-worker.topic.budget", topic, "image-worker.budget.window", "1h")),
                Map.of(
                        CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                        Infrastructure.get().kafka().bootstrapServers()),
                new ObjectMapper(),
                registry,
                settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new FailingWhenArmed()),
                System::nanoTime,
                Duration.ofMillis(100));
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
                TestConfig.worker(Map.of("image-worker.topic.budget", topic, "image-worker.budget.window", "1h")),
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
                Duration.ofMillis(100));
        log.start();

        await().atMost(Duration.ofSeconds(30)).until(() -> log.used(window) == 1);
        assertThat(written).isTrue();
    }

    private static void write(String bootstrap, String topic, byte[] value) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, value)).get();
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
