package io.imageworker.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.infra.Infrastructure;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The console's reader on the real broker: an event the console fails on (anyone who may write the result topics can
 * write one) is skipped and counted, and the reader goes on with the next; it is not read again and again.
 */
class ConsoleReaderBrokerTest {

    private static final Duration WITHIN = Duration.ofSeconds(30);

    @Test
    void anEventTheConsoleFailsOnIsSkippedAndCountedAndTheNextIsShown() throws Exception {
        String topic = "image-completed-console-" + UUID.randomUUID();
        String bootstrap = Infrastructure.get().kafka().bootstrapServers();
        Infrastructure.get().kafka().createTopics(1, topic);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all"),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (String id : List.of("boom-1", "fine-1")) {
                producer.send(new ProducerRecord<>(topic, 0, null, completed(id)))
                        .get();
            }
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ConsoleFeed feed = new ConsoleFeed(100, 1 << 20);
        List<String> failedOn = new ArrayList<>();
        ConsoleReader reader = new ConsoleReader(
                Map.of(topic, ConsoleEvents.Kind.COMPLETED),
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                feed,
                new ObjectMapper(),
                registry,
                new WorkerThreads(),
                entry -> {
                    if (entry.requestId().startsWith("boom")) {
                        synchronized (failedOn) {
                            failedOn.add(entry.requestId());
                        }
                        throw new IllegalStateException("the console fails on this event");
                    }
                    feed.apply(entry);
                });
        reader.start();
        try {
            await().atMost(WITHIN).until(() -> feed.find("fine-1").isPresent());
            assertThat(registry.get("image_worker_side_topic_records_skipped")
                            .tag("topic", "console")
                            .tag("reason", "failed")
                            .counter()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("image_worker_console_reader_restarts")
                            .counter()
                            .count())
                    .isZero();
            synchronized (failedOn) {
                assertThat(failedOn).as("read once, not again and again").containsExactly("boom-1");
            }
            assertThat(feed.find("boom-1")).isEmpty();
        } finally {
            reader.stop();
        }
    }

    private static byte[] completed(String id) {
        return ("{\"requestId\":\"" + id + "\",\"producer\":\"p\",\"timings\":{},\"images\":[]}")
                .getBytes(StandardCharsets.UTF_8);
    }
}
