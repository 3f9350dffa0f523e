package io.imageworker.testing;

import static org.awaitility.Awaitility.await;

import io.imageworker.testing.infra.Infrastructure;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A producer of requests and a background consumer of every result topic, with the plain Kafka client against the
 * real broker: what a producer and a consumer of image-worker would see. Every record it reads is checked against the
 * event contract ({@link EventContract}: the AsyncAPI document and its JSON Schemas); a record that breaks it fails
 * whichever test next asks this client for records, and the class at its close.
 */
public final class KafkaTestClient implements AutoCloseable {

    private static final String STARTED = "image.started";

    private final KafkaProducer<byte[], byte[]> producer;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final List<ConsumerRecord<byte[], byte[]>> received = new CopyOnWriteArrayList<>();
    private final List<String> contractViolations = new CopyOnWriteArrayList<>();
    private final Thread poller;
    private volatile boolean running = true;

    /** Connects to the test run's broker and starts reading the result topics from their beginning. */
    public KafkaTestClient(String bootstrapServers, List<String> resultTopics) {
        Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producer = new KafkaProducer<>(producerProps, new ByteArraySerializer(), new ByteArraySerializer());
        Properties consumerProps = new Properties();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, "test-" + UUID.randomUUID());
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumer = new KafkaConsumer<>(consumerProps, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.subscribe(resultTopics);
        poller = new Thread(this::poll, "test-result-consumer");
        poller.setDaemon(true);
        poller.start();
    }

    /** A client of the shared infrastructure reading the default result topics and {@code image-status}. */
    public static KafkaTestClient forDefaultTopics() {
        return new KafkaTestClient(
                Infrastructure.get().kafkaBootstrapServers(),
                List.of("image-completed", "image-failed", "image-request-dlq", WorkerTestResource.STATUS));
    }

    private void poll() {
        while (running) {
            try {
                consumer.poll(Duration.ofMillis(100)).forEach(this::receive);
            } catch (org.apache.kafka.common.errors.WakeupException e) {
                return;
            } catch (RuntimeException e) {
                // The broker may be restarting in a fault test; keep polling.
            }
        }
    }

    private void receive(ConsumerRecord<byte[], byte[]> record) {
        List<String> problems = EventContract.problems(record);
        if (!problems.isEmpty()) {
            contractViolations.add(record.topic() + " record of " + header(record, "ce_subject") + ": " + problems);
        }
        received.add(record);
    }

    /** Fails when any record read so far breaks the event contract. */
    public void assertContractKept() {
        if (!contractViolations.isEmpty()) {
            throw new AssertionError("events that break the contract (asyncapi.yaml): " + contractViolations);
        }
    }

    /** Sends a value with no key and no headers, and waits for the broker's acknowledgement. */
    public void send(String topic, String value) {
        send(topic, null, value, Map.of());
    }

    /** Sends a record and waits for the broker's acknowledgement. */
    public void send(String topic, String key, String value, Map<String, String> headers) {
        sendBytes(
                topic,
                key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8),
                headers);
    }

    /** Sends raw bytes and waits for the broker's acknowledgement. */
    public void sendBytes(String topic, byte[] key, byte[] value, Map<String, String> headers) {
        List<Header> recordHeaders = new ArrayList<>();
        headers.forEach((name, headerValue) ->
                recordHeaders.add(new RecordHeader(name, headerValue.getBytes(StandardCharsets.UTF_8))));
        send(new ProducerRecord<>(topic, null, key, value, recordHeaders));
    }

    /** Sends a record as it is (a partition of its own, any bytes, a null value) and waits for the acknowledgement. */
    public RecordMetadata send(ProducerRecord<byte[], byte[]> record) {
        try {
            return producer.send(record).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("could not send to " + record.topic(), e);
        }
    }

    /** Every terminal event received so far whose {@code ce_subject} is {@code requestId}. */
    public List<ConsumerRecord<byte[], byte[]>> results(String requestId) {
        assertContractKept();
        return received.stream()
                .filter(r -> !r.topic().endsWith("dlq"))
                .filter(r -> !STARTED.equals(header(r, "ce_type")))
                .filter(r -> requestId.equals(header(r, "ce_subject")))
                .toList();
    }

    /** Every {@code image.started} event received so far whose {@code ce_subject} is {@code requestId}. */
    public List<ConsumerRecord<byte[], byte[]>> statusEvents(String requestId) {
        assertContractKept();
        return received.stream()
                .filter(r -> STARTED.equals(header(r, "ce_type")))
                .filter(r -> requestId.equals(header(r, "ce_subject")))
                .toList();
    }

    /** Waits until {@code requestId} has a terminal event and returns the first one. */
    public ConsumerRecord<byte[], byte[]> awaitResult(String requestId, Duration within) {
        await().atMost(within).pollInterval(Duration.ofMillis(50)).until(() -> !results(requestId)
                .isEmpty());
        return results(requestId).get(0);
    }

    /** Every record received on the DLQ topic so far. */
    public List<ConsumerRecord<byte[], byte[]>> deadLetters() {
        assertContractKept();
        return received.stream().filter(r -> r.topic().endsWith("dlq")).toList();
    }

    /** Every record received so far. */
    public List<ConsumerRecord<byte[], byte[]>> received() {
        assertContractKept();
        return List.copyOf(received);
    }

    /** A header's value as UTF-8, or null. */
    public static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            poller.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        consumer.close();
        producer.close();
        assertContractKept();
    }
}
