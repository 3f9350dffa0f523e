package io.imageworker.testing.infra;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.imageworker.testing.launch.TakesAbout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;

/**
 * The servers of the test run are real, reachable, shared by every class loader of the JVM, and keep their data across
 * a stop, a crash and a restart; the embedded ones of a local run keep it from one run to the next. The stops, kills
 * and restarts are done to servers of this class's own, of the same kind as the shared ones: the other test classes of
 * the JVM run beside it on the shared servers. Embedded, they keep their data in this class's directory, as a local
 * run's do ({@link Infrastructure#startEmbedded(Path)}), and the last test starts them again on it.
 */
@TakesAbout(seconds = 50)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InfrastructureIT {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final byte[] PNG_BYTES = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 1, 2, 3};

    /** This class's own servers, which it stops, kills and restarts. */
    private static Infrastructure infrastructure;

    /** Where they keep their data when they are embedded. */
    @TempDir
    static Path dataDir;

    @BeforeAll
    static void startServers() {
        infrastructure = Infrastructure.choosesEmbedded()
                ? Infrastructure.startEmbedded(dataDir.resolve("servers"))
                : Infrastructure.startOwn();
    }

    @AfterAll
    static void stopServers() {
        infrastructure.close();
    }

    @Test
    void sharesOneInstancePerTestRun() {
        Infrastructure shared = Infrastructure.get();
        assertThat(Infrastructure.get()).isSameAs(shared);
        assertThat(shared).isNotSameAs(infrastructure);
        assertThat(shared.kafkaBootstrapServers()).isEqualTo(shared.kafka().bootstrapServers());
        assertThat(shared.s3Endpoint()).isEqualTo(shared.s3().endpoint());
    }

    @Test
    void sharesItsServersWithTestsOfAnotherClassLoader() throws Exception {
        // As Quarkus does for a @QuarkusTest: this package's classes loaded afresh, everything else shared.
        try (PackageFirstClassLoader quarkusLike =
                new PackageFirstClassLoader(getClass().getClassLoader())) {
            Class<?> otherCopy = quarkusLike.loadClass(Infrastructure.class.getName());
            assertThat(otherCopy).isNotSameAs(Infrastructure.class);

            Object other = otherCopy.getMethod("get").invoke(null);

            Infrastructure shared = Infrastructure.get();
            assertThat(otherCopy.getMethod("kafkaBootstrapServers").invoke(other))
                    .isEqualTo(shared.kafkaBootstrapServers());
            assertThat(otherCopy.getMethod("s3Endpoint").invoke(other)).isEqualTo(shared.s3Endpoint());
            assertThat(otherCopy.getMethod("s3SecretKey").invoke(other)).isEqualTo(shared.s3SecretKey());
            Object otherStore = otherCopy.getMethod("s3").invoke(other);
            assertThat(quarkusLike
                            .loadClass(ManagedStore.class.getName())
                            .getMethod("localDataDir")
                            .invoke(otherStore))
                    .isEqualTo(shared.s3().localDataDir());
        }
    }

    @Test
    void consumesARecordProducedThroughTheBroker() {
        String topic = uniqueName("produce-consume");
        infrastructure.kafka().createTopics(topic);

        send(topic, "request-1", "{\"prompt\":\"a red fox\"}");

        try (KafkaConsumer<String, String> consumer = consumer(uniqueName("group"))) {
            consumer.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> records = pollUntil(consumer, 1);
            assertThat(records).singleElement().satisfies(record -> {
                assertThat(record.key()).isEqualTo("request-1");
                assertThat(record.value()).isEqualTo("{\"prompt\":\"a red fox\"}");
            });
        }
    }

    /**
     * Killed (SIGKILL), the broker keeps what it acknowledged: the records and a committed offset. (Its graceful stop
     * and start are the fault suite's, {@code FaultSuiteIT}, which loses nothing across them.)
     */
    @Test
    void keepsItsRecordsAndACommittedOffsetWhenTheBrokerIsKilled() {
        ManagedKafka kafka = infrastructure.kafka();
        assumeTrue(kafka.supportsRestart(), "the broker is external");
        String topic = uniqueName("offset-survives-kill");
        String group = uniqueName("group");
        TopicPartition partition = new TopicPartition(topic, 0);
        send(topic, "a", "first");
        send(topic, "b", "second");
        send(topic, "c", "third");
        try (KafkaConsumer<String, String> consumer = consumer(group)) {
            consumer.assign(List.of(partition));
            assertThat(pollUntil(consumer, 3)).hasSize(3);
            // Done with the first two records only.
            consumer.commitSync(Map.of(partition, new OffsetAndMetadata(2)));
        }

        kafka.kill();
        try (Admin admin = KafkaAdmin.admin(kafka.bootstrapServers())) {
            assertThatThrownBy(() -> admin.describeCluster(new DescribeClusterOptions().timeoutMs(2_000))
                            .nodes()
                            .get())
                    .as("the killed broker answers nothing")
                    .hasCauseInstanceOf(org.apache.kafka.common.errors.TimeoutException.class);
        }
        kafka.start();

        try (KafkaConsumer<String, String> consumer = consumer(group)) {
            assertThat(consumer.committed(Set.of(partition), PATIENCE))
                    .extractingByKey(partition)
                    .extracting(OffsetAndMetadata::offset)
                    .isEqualTo(2L);
            consumer.assign(List.of(partition));
            assertThat(pollUntil(consumer, 1))
                    .first()
                    .extracting(ConsumerRecord::value)
                    .isEqualTo("third");
            consumer.seekToBeginning(List.of(partition));
            assertThat(pollUntil(consumer, 3))
                    .extracting(ConsumerRecord::value)
                    .containsExactly("first", "second", "third");
        }
    }

    @Test
    void readsBackAStoredObject() {
        String bucket = uniqueName("bucket");
        infrastructure.s3().createBucket(bucket);
        try (S3AsyncClient s3 = infrastructure.s3().newAsyncClient()) {
            put(s3, bucket, "images/fox.png");

            ResponseBytes<GetObjectResponse> object = get(s3, bucket, "images/fox.png");

            assertThat(object.asByteArray()).isEqualTo(PNG_BYTES);
            assertThat(object.response().contentType()).isEqualTo("image/png");
        }
    }

    @Test
    void failsRequestsWhileTheStoreIsDownAndKeepsObjectsAcrossItsRestart() {
        ManagedStore store = infrastructure.s3();
        assumeTrue(store.supportsRestart(), "the store is external");
        String bucket = uniqueName("bucket");
        store.createBucket(bucket);
        try (S3AsyncClient s3 = store.newAsyncClient()) {
            put(s3, bucket, "kept.png");

            store.stop();
            assertThatThrownBy(() -> get(s3, bucket, "kept.png"))
                    .isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(SdkClientException.class);
            store.start();

            assertThat(get(s3, bucket, "kept.png").asByteArray()).isEqualTo(PNG_BYTES);
        }
    }

    @Test
    void embeddedStoreKeepsEachObjectAsAFileUnderItsDataDir() throws Exception {
        ManagedStore store = infrastructure.s3();
        assumeTrue(store.localDataDir().isPresent(), "the store is not embedded");
        String bucket = uniqueName("bucket");
        store.createBucket(bucket);
        try (S3AsyncClient s3 = store.newAsyncClient()) {
            put(s3, bucket, "images/2026/fox.png");
        }

        Path file = store.localDataDir().orElseThrow().resolve(bucket).resolve("images/2026/fox.png");
        assertThat(file).isRegularFile();
        assertThat(Files.readAllBytes(file)).isEqualTo(PNG_BYTES);
    }

    /**
     * A local run finds the records and objects of the run before, on the same directory. Last: it ends the class's
     * servers when they are embedded, and its second run becomes them; otherwise it starts two runs of its own.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void aLocalRunFindsTheRecordsAndObjectsOfThePreviousRun() {
        Path runs = Infrastructure.choosesEmbedded() ? dataDir.resolve("servers") : dataDir.resolve("local-run");
        Infrastructure firstRun =
                Infrastructure.choosesEmbedded() ? infrastructure : Infrastructure.startEmbedded(runs);
        String topic = uniqueName("image-request");
        firstRun.kafka().createTopics(topic);
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaProducer<String, String> producer = producer(firstRun)) {
            producer.send(new ProducerRecord<>(topic, 0, "request-1", "{}")).get(PATIENCE.toSeconds(), SECONDS);
        } catch (Exception e) {
            throw new AssertionError("Could not produce to " + topic, e);
        }
        String bucket = uniqueName("images");
        firstRun.s3().createBucket(bucket);
        try (S3AsyncClient s3 = firstRun.s3().newAsyncClient()) {
            put(s3, bucket, "images/request-1.png");
        }
        assertThat(firstRun.s3().localDataDir())
                .contains(runs.resolve("s3").toAbsolutePath())
                .get()
                .satisfies(dir -> assertThat(dir.resolve(bucket).resolve("images/request-1.png"))
                        .hasBinaryContent(PNG_BYTES));
        firstRun.close();

        Infrastructure secondRun = Infrastructure.startEmbedded(runs);
        if (firstRun == infrastructure) {
            infrastructure = secondRun;
        }
        try (KafkaConsumer<String, String> consumer = consumer(secondRun, uniqueName("local-run-check"))) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            assertThat(pollUntil(consumer, 1)).extracting(ConsumerRecord::key).containsExactly("request-1");
        }
        try (S3AsyncClient s3 = secondRun.s3().newAsyncClient()) {
            assertThat(get(s3, bucket, "images/request-1.png").asByteArray()).isEqualTo(PNG_BYTES);
        } finally {
            if (secondRun != infrastructure) {
                secondRun.close();
            }
        }
    }

    private static KafkaProducer<String, String> producer(Infrastructure servers) {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                servers.kafkaBootstrapServers(),
                ProducerConfig.ACKS_CONFIG,
                "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                StringSerializer.class));
    }

    private static void send(String topic, String key, String value) {
        try (KafkaProducer<String, String> producer = producer(infrastructure)) {
            producer.send(new ProducerRecord<>(topic, 0, key, value)).get(PATIENCE.toSeconds(), SECONDS);
        } catch (Exception e) {
            throw new AssertionError("Could not produce to " + topic, e);
        }
    }

    private static KafkaConsumer<String, String> consumer(String group) {
        return consumer(infrastructure, group);
    }

    private static KafkaConsumer<String, String> consumer(Infrastructure servers, String group) {
        return new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                servers.kafkaBootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                false,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class));
    }

    private static List<ConsumerRecord<String, String>> pollUntil(KafkaConsumer<String, String> consumer, int count) {
        List<ConsumerRecord<String, String>> received = new ArrayList<>();
        await().atMost(PATIENCE).until(() -> {
            consumer.poll(Duration.ofMillis(200)).forEach(received::add);
            return received.size() >= count;
        });
        return received;
    }

    private static void put(S3AsyncClient s3, String bucket, String key) {
        s3.putObject(
                        request -> request.bucket(bucket).key(key).contentType("image/png"),
                        AsyncRequestBody.fromBytes(PNG_BYTES))
                .join();
    }

    private static ResponseBytes<GetObjectResponse> get(S3AsyncClient s3, String bucket, String key) {
        return s3.getObject(request -> request.bucket(bucket).key(key), AsyncResponseTransformer.toBytes())
                .join();
    }

    private static String uniqueName(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Loads the classes of this package itself, from the same class files; delegates everything else. */
    private static final class PackageFirstClassLoader extends ClassLoader implements AutoCloseable {

        PackageFirstClassLoader(ClassLoader parent) {
            super("package-first", parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith(Infrastructure.class.getPackageName() + ".")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> loaded = findLoadedClass(name);
                if (loaded == null) {
                    String file = name.replace('.', '/') + ".class";
                    try (var in = getParent().getResourceAsStream(file)) {
                        if (in == null) {
                            throw new ClassNotFoundException(name);
                        }
                        byte[] bytes = in.readAllBytes();
                        loaded = defineClass(name, bytes, 0, bytes.length);
                    } catch (java.io.IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                return loaded;
            }
        }

        @Override
        public void close() {}
    }
}
