package io.imageworker.console;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.imageworker.config.KafkaClientConfig;
import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.RequestId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * What the console may do when its operator allows it ({@code IMAGE_WORKER_CONSOLE_ACTIONS}): publish a cancel to the
 * cancel topic, as a producer would ({@code {"requestId", "producer"}} keyed by the id: docs/events.md, Cancellation),
 * and publish a request typed in the page to the request topic (the producer's own topic when producers are told by
 * topic). Its Kafka producer is made at the first action and closed with the console.
 */
final class ConsoleActions {

    /** The longest prompt the page may send. */
    static final int MAX_PROMPT = 4000;

    private final WorkerConfig config;
    private final TopicSettings topics;
    private final List<String> allowed;
    private final Map<String, Object> kafka;
    private final ObjectMapper json;
    private Producer<byte[], byte[]> producer;

    ConsoleActions(
            WorkerConfig config,
            TopicSettings topics,
            ConsoleSettings console,
            Map<String, Object> kafka,
            ObjectMapper json) {
        this.config = config;
        this.topics = topics;
        this.allowed = console.actions().orElse(List.of());
        this.kafka = kafka;
        this.json = json;
    }

    /** The actions allowed. */
    List<String> allowed() {
        return allowed;
    }

    boolean mayCancel() {
        return allowed.contains("cancel");
    }

    boolean maySubmit() {
        return allowed.contains("submit");
    }

    /** The cancel topic, when cancellation is on. */
    Optional<String> cancelTopic() {
        return topics.cancel().filter(name -> !name.isBlank());
    }

    /** Publishes a cancel of {@code requestId} of {@code producer} (null: none named); completes once written. */
    CompletableFuture<Void> cancel(String requestId, String producer) {
        ObjectNode cancel = json.createObjectNode().put("requestId", requestId);
        if (producer != null) {
            cancel.put("producer", producer);
        }
        return send(cancelTopicOf(producer), requestId, cancel);
    }

    /**
     * Where a cancel of {@code producer}'s request goes: the cancel topic, or with producers taken from their topics
     * (issue 49) that producer's own, {@code <cancel topic>.<producer>}, the only one whose cancels stop its requests.
     */
    String cancelTopicOf(String producer) {
        String topic = cancelTopic().orElseThrow();
        boolean perProducer = config.producerIdentity() == WorkerConfig.ProducerIdentity.topic;
        return perProducer
                        && producer != null
                        && config.producers().orElse(List.of()).contains(producer)
                ? topic + "." + producer
                : topic;
    }

    /** A request typed in the page, checked: its fields, or why it is refused. */
    record Submission(String prompt, String producer, String size, int count) {

        /** Why this cannot be sent, or empty. */
        Optional<String> refusal() {
            if (prompt == null || prompt.isBlank()) {
                return Optional.of("a prompt is needed");
            }
            if (prompt.length() > MAX_PROMPT) {
                return Optional.of("a prompt from the console is at most " + MAX_PROMPT + " characters");
            }
            if (producer != null && !ImageRequest.PRODUCER.matcher(producer).matches()) {
                return Optional.of("a producer is 1 to 64 characters of [A-Za-z0-9._-]");
            }
            if (size != null && (size.length() > 32 || !size.matches("[A-Za-z0-9:x]+"))) {
                return Optional.of("a size is auto, WxH or a ratio such as 16:9");
            }
            if (count < 1 || count > 8) {
                return Optional.of("count is 1 to 8");
            }
            return Optional.empty();
        }
    }

    /** Why {@code submission}'s producer has no request topic here, or empty. */
    Optional<String> topicRefusal(Submission submission) {
        if (config.producerIdentity() != WorkerConfig.ProducerIdentity.topic) {
            return Optional.empty();
        }
        List<String> producers = config.producers().orElse(List.of());
        if (submission.producer() == null || !producers.contains(submission.producer())) {
            return Optional.of("producers are told by topic here: name one of " + producers);
        }
        return Optional.empty();
    }

    /** Publishes {@code submission} as a new request; completes with its {@code requestId} once written. */
    CompletableFuture<String> submit(Submission submission) {
        String requestId = "console-" + UUID.randomUUID().toString().substring(0, 13);
        if (!RequestId.isValid(requestId)) {
            throw new IllegalStateException(requestId);
        }
        ObjectNode request = json.createObjectNode().put("requestId", requestId).put("prompt", submission.prompt());
        if (submission.producer() != null) {
            request.put("producer", submission.producer());
        }
        if (submission.size() != null) {
            request.put("size", submission.size());
        }
        if (submission.count() > 1) {
            request.put("count", submission.count());
        }
        String topic = config.producerIdentity() == WorkerConfig.ProducerIdentity.topic
                ? topics.request() + "." + submission.producer()
                : topics.request();
        return send(topic, requestId, request).thenApply(written -> requestId);
    }

    private CompletableFuture<Void> send(String topic, String key, ObjectNode value) {
        CompletableFuture<Void> written = new CompletableFuture<>();
        byte[] bytes;
        try {
            bytes = json.writeValueAsBytes(value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            written.completeExceptionally(e);
            return written;
        }
        producer()
                .send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), bytes), (metadata, failure) -> {
                    if (failure == null) {
                        written.complete(null);
                    } else {
                        written.completeExceptionally(failure);
                    }
                });
        return written;
    }

    private synchronized Producer<byte[], byte[]> producer() {
        if (producer == null) {
            producer = new KafkaProducer<>(
                    KafkaClientConfig.of(
                            kafka,
                            ProducerConfig.configNames(),
                            Map.of(
                                    ProducerConfig.CLIENT_ID_CONFIG,
                                    "image-worker-console",
                                    ProducerConfig.ACKS_CONFIG,
                                    "all",
                                    ProducerConfig.MAX_BLOCK_MS_CONFIG,
                                    10_000,
                                    ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
                                    30_000,
                                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
                                    10_000)),
                    new ByteArraySerializer(),
                    new ByteArraySerializer());
        }
        return producer;
    }

    synchronized void close() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
            producer = null;
        }
    }
}
