package io.imageworker.messaging.sidetopics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.processing.Cancellations;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.infra.Infrastructure;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The cancel topic's reader on a real broker, a topic of three partitions: two readers (two workers) each see every
 * cancel, from the records younger than the retention; a record the client cannot read makes a new reader take over
 * where the last stopped, and the cancel behind it still arrives.
 */
class CancelReaderBrokerTest {

    private static final Duration WITHIN = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofHours(1);

    private final String topic = "image-cancel-" + UUID.randomUUID();
    private final String bootstrap = Infrastructure.get().kafka().bootstrapServers();
    private final List<CancelReader> readers = new ArrayList<>();
    /** Armed, the next value the first reader reads fails to be read, once. */
    private final AtomicBoolean failNext = new AtomicBoolean();

    @AfterEach
    void stop() {
        readers.forEach(CancelReader::stop);
    }

    @Test
    void everyReaderSeesEveryCancelOfTheRetentionAndOutlivesARecordItCannotRead() throws Exception {
        Infrastructure.get().kafka().createTopics(3, topic);
        long now = System.currentTimeMillis();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all"),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
            send(producer, 0, now - RETENTION.toMillis() - 60_000, "old", cancel("old"));
            send(producer, 0, now, "a", cancel("a"));
            send(producer, 1, now, "b", cancel("b"));
            send(producer, 2, now, "by-key", "not json");
            send(producer, 2, now, "tombstone", null);
            send(producer, 1, now, "other-key", cancel("c"));

            SimpleMeterRegistry firstMetrics = new SimpleMeterRegistry();
            Cancellations first =
                    new Cancellations(Clock.systemUTC(), RETENTION, Cancellations.MAX_HELD_BYTES, true, firstMetrics);
            Cancellations second = new Cancellations(
                    Clock.systemUTC(), RETENTION, Cancellations.MAX_HELD_BYTES, true, new SimpleMeterRegistry());
            CancelReader firstReader = reader(first, firstMetrics, new FailingWhenArmed());
            CancelReader secondReader = reader(second, new SimpleMeterRegistry(), new ByteArrayDeserializer());

            await().atMost(WITHIN).until(() -> firstReader.caughtUp() && secondReader.caughtUp());
            for (Cancellations cancellations : List.of(first, second)) {
                assertThat(List.of("a", "b", "c", "by-key")).allMatch(cancellations::isCancelled);
                assertThat(cancellations.isCancelled("old"))
                        .as("older than the retention")
                        .isFalse();
                assertThat(cancellations.isCancelled("tombstone")).isFalse();
                assertThat(cancellations.isCancelled("other-key"))
                        .as("the value's id wins over the key")
                        .isFalse();
            }

            failNext.set(true);
            send(producer, 0, System.currentTimeMillis(), "later", cancel("later"));

            await().atMost(WITHIN).until(() -> first.isCancelled("later") && second.isCancelled("later"));
            assertThat(failNext).as("the record did fail once").isFalse();
            assertThat(firstMetrics
                            .get("image_worker_cancel_reader_restarts")
                            .counter()
                            .count())
                    .isEqualTo(1);
            assertThat(firstReader.reading()).isTrue();
            await().atMost(WITHIN).until(() -> firstReader.stall().isEmpty());
        }
    }

    private CancelReader reader(
            Cancellations cancellations, SimpleMeterRegistry registry, Deserializer<byte[]> values) {
        CancelReader reader = unstarted(topic, cancellations, registry, values);
        readers.add(reader);
        reader.startReading();
        return reader;
    }

    /** A reader of {@code topic} on the test broker, not started, that reads values with {@code values}. */
    static CancelReader unstarted(
            String topic, Cancellations cancellations, MeterRegistry registry, Deserializer<byte[]> values) {
        return new CancelReader(
                Optional.of(topic),
                cancellations,
                Map.of(
                        CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                        Infrastructure.get().kafka().bootstrapServers()),
                new ObjectMapper(),
                registry,
                settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), values),
                System::nanoTime,
                new WorkerThreads());
    }

    private void send(KafkaProducer<byte[], byte[]> producer, int partition, long timestamp, String key, String value)
            throws Exception {
        producer.send(new ProducerRecord<>(
                        topic,
                        partition,
                        timestamp,
                        key.getBytes(StandardCharsets.UTF_8),
                        value == null ? null : value.getBytes(StandardCharsets.UTF_8)))
                .get(30, TimeUnit.SECONDS);
    }

    private static String cancel(String requestId) {
        return "{\"requestId\":\"" + requestId + "\"}";
    }

    /** Reads values as they are, except the first one read after {@link #failNext} is armed. */
    private final class FailingWhenArmed implements Deserializer<byte[]> {
        @Override
        public byte[] deserialize(String topic, byte[] data) {
            if (data != null && failNext.compareAndSet(true, false)) {
                throw new SerializationException("an unreadable record, for the test");
            }
            return data;
        }
    }
}
