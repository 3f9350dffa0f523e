package io.imageworker.testing.infra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.launch.TakesAbout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.S3AsyncClient;

/** The embedded servers of a local run keep their data in the directory they are given, from one run to the next. */
@TakesAbout(seconds = 41)
class InfrastructureEmbeddedIT {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    void localRunFindsTheRecordsAndObjectsOfThePreviousRun(@TempDir Path dataDir) throws Exception {
        TopicPartition partition = new TopicPartition("image-request", 0);
        try (Infrastructure firstRun = Infrastructure.startEmbedded(dataDir)) {
            firstRun.kafka().createTopics(partition.topic());
            try (KafkaProducer<String, String> producer = producer(firstRun)) {
                producer.send(new ProducerRecord<>(partition.topic(), 0, "request-1", "{}"))
                        .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            }
            firstRun.s3().createBucket("images");
            try (S3AsyncClient s3 = firstRun.s3().newAsyncClient()) {
                s3.putObject(
                                request -> request.bucket("images").key("images/request-1.png"),
                                AsyncRequestBody.fromString("png bytes"))
                        .join();
            }
            assertThat(firstRun.s3().localDataDir())
                    .contains(dataDir.resolve("s3").toAbsolutePath())
                    .get()
                    .satisfies(dir -> assertThat(dir.resolve("images/images/request-1.png"))
                            .hasContent("png bytes"));
        }

        try (Infrastructure secondRun = Infrastructure.startEmbedded(dataDir)) {
            try (KafkaConsumer<String, String> consumer = consumer(secondRun)) {
                consumer.assign(List.of(partition));
                consumer.seekToBeginning(List.of(partition));
                List<ConsumerRecord<String, String>> records = new ArrayList<>();
                await().atMost(PATIENCE).until(() -> {
                    consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                    return !records.isEmpty();
                });
                assertThat(records).extracting(ConsumerRecord::key).containsExactly("request-1");
            }
            try (S3AsyncClient s3 = secondRun.s3().newAsyncClient()) {
                byte[] object = s3.getObject(
                                request -> request.bucket("images").key("images/request-1.png"),
                                AsyncResponseTransformer.toBytes())
                        .join()
                        .asByteArray();
                assertThat(new String(object, StandardCharsets.UTF_8)).isEqualTo("png bytes");
            }
        }
    }

    private static KafkaProducer<String, String> producer(Infrastructure infrastructure) {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, infrastructure.kafkaBootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
    }

    private static KafkaConsumer<String, String> consumer(Infrastructure infrastructure) {
        return new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                infrastructure.kafkaBootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "local-run-check",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class));
    }
}
