package io.imageworker.testing;

import static org.awaitility.Awaitility.await;

import io.imageworker.testing.infra.Infrastructure;
import io.smallrye.reactive.messaging.kafka.companion.ConsumerTask;
import io.smallrye.reactive.messaging.kafka.companion.KafkaCompanion;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A producer of requests and a background consumer of every result topic against the real broker: what a producer
 * and a consumer of image-worker would see. The consumer is the Kafka companion's (Quarkus's Kafka test client,
 * {@link #kafka()} also answers for topics, offsets and groups); the producer is the plain Kafka client's, one for the
 * client's life (a companion producer task closes its producer when it ends). Every record it reads is checked against the
 * event contract ({@link EventContract}: the AsyncAPI document and its JSON Schemas); a record that breaks it fails
 * whichever test next asks this client for records, and the class at its close.
 */
public final class KafkaTestClient implements AutoCloseable {

    private static final String STARTED = "image.started";

    private final KafkaCompanion kafka;
    private final KafkaProducer<byte[], byte[]> producer;
    private final ConsumerTask<byte[], byte[]> received;
    private final List<String> contractViolations = new CopyOnWriteArrayList<>();
    /**
     * The records read so far by their {@code ce_subject} (null: none), in the order read: tests ask for one request's
     * events every 50 ms while thousands of others' have been read, and a scan of them all each time was a tenth of
     * the unit phase's test threads' CPU.
     */
    private final Map<String, List<ConsumerRecord<byte[], byte[]>>> bySubject = new ConcurrentHashMap<>();

    /** Connects to the test run's broker and starts reading the result topics from their beginning. */
    public KafkaTestClient(String bootstrapServers, List<String> resultTopics) {
        kafka = new KafkaCompanion(bootstrapServers);
        producer = new KafkaProducer<>(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers, ProducerConfig.ACKS_CONFIG, "all"),
                new ByteArraySerializer(),
                new ByteArraySerializer());
        // A group of its own, from the earliest offset: every record the topics hold, as a consumer following the
        // contract reads them (read_committed: not the records of a transaction that was aborted).
        received = kafka.consumeWithDeserializers(new ByteArrayDeserializer(), new ByteArrayDeserializer())
                .withProp(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")
                .fromTopics(Set.copyOf(resultTopics), records -> records.invoke(this::read));
    }

    /** A client of the shared infrastructure reading the default result topics and {@code image-status}. */
    public static KafkaTestClient forDefaultTopics() {
        return new KafkaTestClient(
                Infrastructure.get().kafkaBootstrapServers(),
                List.of("image-completed", "image-failed", "image-request-dlq", WorkerTestResource.STATUS));
    }

    /** The broker through the Kafka companion: topics, offsets, consumer groups. */
    public KafkaCompanion kafka() {
        return kafka;
    }

    private void read(ConsumerRecord<byte[], byte[]> record) {
        String subject = header(record, "ce_subject");
        if (subject != null) {
            bySubject
                    .computeIfAbsent(subject, any -> new CopyOnWriteArrayList<>())
                    .add(record);
        }
        checkContract(record);
    }

    private void checkContract(ConsumerRecord<byte[], byte[]> record) {
        List<String> problems = EventContract.problems(record);
        if (!problems.isEmpty()) {
            contractViolations.add(record.topic() + " record of " + header(record, "ce_subject") + ": " + problems);
        }
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

    /**
     * Sends {@code value} of each key to {@code topic} all at once, then waits for every acknowledgement: many records
     * in about the time of one, where sending them one by one would wait a round trip (and the producer's linger) each.
     */
    public void sendAll(String topic, Map<String, String> valueByKey) {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        valueByKey.forEach((key, value) -> sent.add(producer.send(new ProducerRecord<>(
                topic, key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8)))));
        producer.flush();
        for (Future<RecordMetadata> acknowledgement : sent) {
            try {
                acknowledgement.get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("could not send to " + topic, e);
            }
        }
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
        return bySubject.getOrDefault(requestId, List.of()).stream()
                .filter(r -> !r.topic().endsWith("dlq"))
                .filter(r -> !STARTED.equals(header(r, "ce_type")))
                .toList();
    }

    /** Every {@code image.started} event received so far whose {@code ce_subject} is {@code requestId}. */
    public List<ConsumerRecord<byte[], byte[]>> statusEvents(String requestId) {
        assertContractKept();
        return bySubject.getOrDefault(requestId, List.of()).stream()
                .filter(r -> STARTED.equals(header(r, "ce_type")))
                .toList();
    }

    /** Waits until {@code requestId} has a terminal event and returns the first one. */
    public ConsumerRecord<byte[], byte[]> awaitResult(String requestId, Duration within) {
        // Looked at once first: Awaitility's first look comes after a poll delay as long as the interval, which each
        // of a test's hundreds of results waited even when it was already there.
        await().atMost(within)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> !results(requestId).isEmpty());
        return results(requestId).get(0);
    }

    /** Every record received on the DLQ topic so far. */
    public List<ConsumerRecord<byte[], byte[]>> deadLetters() {
        assertContractKept();
        return received.getRecords().stream()
                .filter(r -> r.topic().endsWith("dlq"))
                .toList();
    }

    /** Every record received so far. */
    public List<ConsumerRecord<byte[], byte[]>> received() {
        assertContractKept();
        return List.copyOf(received.getRecords());
    }

    /** A header's value as UTF-8, or null. */
    public static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        received.stop();
        kafka.close();
        producer.close();
        assertContractKept();
    }
}
