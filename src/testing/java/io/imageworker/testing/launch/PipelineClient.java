package io.imageworker.testing.launch;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.testing.KafkaTestClient;
import io.imageworker.testing.gateway.RecordedCall;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;

/**
 * What a producer and a consumer of image-worker do, with the plain Kafka client: publishes requests and reads every
 * terminal event ({@code image-completed}, {@code image-failed}) as it arrives, handing each to a listener. The result
 * topics are read without a consumer group, by partition, from their beginning or from their end as of construction,
 * so no event published after the constructor returns is missed and no rebalance delays the first one.
 */
public final class PipelineClient implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long a topic's partitions may take to be known. */
    private static final Duration METADATA_WAIT = Duration.ofSeconds(30);

    private final LaunchStack.Topics topics;
    private final KafkaProducer<byte[], byte[]> producer;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Consumer<Result> listener;
    private final List<Result> results = new CopyOnWriteArrayList<>();
    private final Thread poller;
    private volatile boolean running = true;

    /**
     * @param fromEnd read only events published from now on (else every event the topics hold)
     * @param listener called on the polling thread with each event, in arrival order
     */
    public PipelineClient(
            String bootstrapServers, LaunchStack.Topics topics, boolean fromEnd, Consumer<Result> listener) {
        this(bootstrapServers, topics, fromEnd, listener, true);
    }

    /**
     * @param readCommitted read as the contract recommends ({@code isolation.level=read_committed}: only events of
     *     committed transactions); false also sees the events of transactions a killed worker left to be aborted
     */
    public PipelineClient(
            String bootstrapServers,
            LaunchStack.Topics topics,
            boolean fromEnd,
            Consumer<Result> listener,
            boolean readCommitted) {
        this.topics = topics;
        this.listener = listener;
        producer = new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        bootstrapServers,
                        ProducerConfig.CLIENT_ID_CONFIG,
                        "image-worker-launch-producer",
                        ProducerConfig.ACKS_CONFIG,
                        "all",
                        ProducerConfig.LINGER_MS_CONFIG,
                        5),
                new ByteArraySerializer(),
                new ByteArraySerializer());
        consumer = new KafkaConsumer<>(
                Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        bootstrapServers,
                        ConsumerConfig.CLIENT_ID_CONFIG,
                        "image-worker-launch-results",
                        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                        false,
                        // Deliver each event as soon as the broker has it.
                        ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG,
                        50,
                        ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                        readCommitted ? "read_committed" : "read_uncommitted"),
                new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        List<TopicPartition> partitions = new ArrayList<>();
        for (String topic : List.of(topics.completed(), topics.failed())) {
            partitionsOf(consumer, topic)
                    .forEach(info -> partitions.add(new TopicPartition(info.topic(), info.partition())));
        }
        consumer.assign(partitions);
        if (fromEnd) {
            consumer.seekToEnd(partitions);
        } else {
            consumer.seekToBeginning(partitions);
        }
        // Resolve the positions now: "the end" is the end as of this moment, not of the first poll.
        partitions.forEach(partition -> consumer.position(partition, Duration.ofSeconds(30)));
        poller = new Thread(this::poll, "launch-result-consumer");
        poller.setDaemon(true);
        poller.start();
    }

    private volatile Map<TopicPartition, Long> positions = Map.of();

    /**
     * The partitions of {@code topic}, once the broker's metadata names them: a topic just created may be answered
     * with none for a while on a busy machine, and a client assigned no partition would read nothing, ever (a run of
     * two suites side by side saw it).
     */
    private static List<PartitionInfo> partitionsOf(KafkaConsumer<?, ?> consumer, String topic) {
        return await("the partitions of " + topic)
                .atMost(METADATA_WAIT)
                .pollInterval(Duration.ofMillis(100))
                .until(() -> consumer.partitionsFor(topic, METADATA_WAIT), found -> found != null && !found.isEmpty());
    }

    private void poll() {
        while (running) {
            try {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                    Result result = Result.of(record, System.nanoTime());
                    results.add(result);
                    listener.accept(result);
                }
                Map<TopicPartition, Long> now = new HashMap<>();
                for (TopicPartition partition : consumer.assignment()) {
                    now.put(partition, consumer.position(partition));
                }
                positions = Map.copyOf(now);
            } catch (WakeupException e) {
                return;
            } catch (RuntimeException e) {
                // A broker restarting or a listener failing: keep reading.
                System.err.println("result consumer: " + e);
            }
        }
    }

    /**
     * Whether this client has read its topics up to {@code ends} (offsets, not record counts: a transaction's commit
     * marker takes an offset too, and a {@code read_committed} reader passes an open transaction only once it ends).
     */
    public boolean caughtUpTo(Map<TopicPartition, Long> ends) {
        Map<TopicPartition, Long> read = positions;
        return ends.entrySet().stream().allMatch(end -> read.getOrDefault(end.getKey(), 0L) >= end.getValue());
    }

    /**
     * A client of the stack's topics that reads every event they hold, as a consumer following the contract does
     * ({@code read_committed}), and calls nothing back.
     */
    public static PipelineClient on(LaunchStack stack) {
        return new PipelineClient(stack.infrastructure().kafkaBootstrapServers(), stack.topics(), false, event -> {});
    }

    /** {@link #on}, reading {@code read_uncommitted}: events of aborted transactions too. */
    public static PipelineClient onUncommitted(LaunchStack stack) {
        return new PipelineClient(
                stack.infrastructure().kafkaBootstrapServers(), stack.topics(), false, event -> {}, false);
    }

    /** Waits until every one of {@code ids} has a terminal event, for at most {@code within}. */
    public void awaitEnded(Collection<String> ids, Duration within) {
        await("a terminal event for every request")
                .atMost(within)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> results.stream()
                        .map(Result::requestId)
                        .collect(Collectors.toSet())
                        .containsAll(ids));
    }

    /** Publishes a request, keyed by its id ({@code null}: no key), and waits for the broker's acknowledgement. */
    public RecordMetadata send(String requestId, String json) {
        try {
            return sendAsync(requestId, json).get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not publish to " + topics.request() + ": " + e.getCause(), e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("the broker did not acknowledge a request within 30 s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while publishing", e);
        }
    }

    /** Publishes a request, keyed by its id ({@code null}: no key), without waiting. */
    public CompletableFuture<RecordMetadata> sendAsync(String requestId, String json) {
        return sendAsync(topics.request(), requestId, json);
    }

    /** Publishes a request to {@code topic} (the priority lane's, say), keyed by its id, without waiting. */
    public CompletableFuture<RecordMetadata> sendAsync(String topic, String requestId, String json) {
        CompletableFuture<RecordMetadata> acknowledged = new CompletableFuture<>();
        byte[] key = requestId == null ? null : requestId.getBytes(StandardCharsets.UTF_8);
        producer.send(new ProducerRecord<>(topic, key, json.getBytes(StandardCharsets.UTF_8)), (metadata, error) -> {
            if (error != null) {
                acknowledged.completeExceptionally(error);
            } else {
                acknowledged.complete(metadata);
            }
        });
        return acknowledged;
    }

    /**
     * Publishes {@code count} requests with the ids {@code <prefix>-<run>-<n>} (a run of its own each time), each
     * keyed by its id, with the body {@code json} makes of the id; waits for the broker's acknowledgements and returns
     * where each went, in publishing order.
     */
    public Map<String, RecordMetadata> publish(String prefix, int count, Function<String, String> json) {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Map<String, CompletableFuture<RecordMetadata>> acks = new LinkedHashMap<>();
        for (int i = 1; i <= count; i++) {
            String id = prefix + "-" + run + "-" + i;
            acks.put(id, sendAsync(id, json.apply(id)));
        }
        flush();
        Map<String, RecordMetadata> records = new LinkedHashMap<>();
        acks.forEach(
                (id, ack) -> records.put(id, ack.orTimeout(30, TimeUnit.SECONDS).join()));
        return records;
    }

    /**
     * The workload a worker is trained on before its JVM writes a class archive or an AOT cache at its exit: {@code
     * count} generate requests with the ids {@code <prefix>-<run>-<n>} (those ending in 0 asking for two images), one
     * the worker refuses ({@code <prefix>-invalid}, {@code INVALID_REQUEST}) and the first one again (replayed from its
     * recorded result). Returns the ids whose terminal events to wait for.
     */
    public List<String> publishTrainingWorkload(String prefix, int count) {
        List<String> ids = new ArrayList<>(publish(
                        prefix,
                        count,
                        id -> request(
                                id, "a training image", id.endsWith("0") ? "\"count\":2" : "\"size\":\"1024x1024\""))
                .keySet());
        String invalid = prefix + "-invalid";
        send(invalid, request(invalid, "a training image", "\"count\":9"));
        send(ids.get(0), request(ids.get(0), "a training image"));
        ids.add(invalid);
        return ids;
    }

    /**
     * Publishes {@code count} requests with the ids {@code <prefix>-<run>-<n>}, keyed by their ids, chosen so that they
     * fall on the {@code partitions} of the request topic in turn (as the producer's partitioner places a key), with
     * the body {@code json} makes of the id: every worker of a group gets its share. Returns the ids in publishing order.
     */
    public List<String> publishOnEveryPartition(
            String prefix, int count, int partitions, Function<String, String> json) {
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<String> ids = new ArrayList<>();
        for (int n = 0; ids.size() < count; n++) {
            String id = prefix + "-" + run + "-" + n;
            int partition = Utils.toPositive(Utils.murmur2(id.getBytes(StandardCharsets.UTF_8))) % partitions;
            if (partition == ids.size() % partitions) {
                send(id, json.apply(id));
                ids.add(id);
            }
        }
        return ids;
    }

    /**
     * A generate request whose prompt ends with its id, as the launch tests write them (see {@link #requestOf}):
     * {@code {"requestId":"<id>","prompt":"<prompt> <id>"}}, with {@code extraFields} (such as {@code "count":4}).
     */
    public static String request(String id, String prompt, String... extraFields) {
        StringBuilder json = new StringBuilder("{\"requestId\":\"" + id + "\"");
        for (String field : extraFields) {
            json.append(',').append(field);
        }
        return json.append(",\"prompt\":\"")
                .append(prompt)
                .append(' ')
                .append(id)
                .append("\"}")
                .toString();
    }

    /** Sends what the producer still buffers. */
    public void flush() {
        producer.flush();
    }

    /** Every event received so far. */
    public List<Result> results() {
        return List.copyOf(results);
    }

    /**
     * The request a gateway call was made for, when the requests' prompts end with their ids (as the launch tests
     * write them) and it is one of {@code ids}; else null.
     */
    public static String requestOf(RecordedCall call, Set<String> ids) {
        String prompt = call.textFields().get("prompt");
        if (prompt == null) {
            return null;
        }
        String id = prompt.substring(prompt.lastIndexOf(' ') + 1);
        return ids.contains(id) ? id : null;
    }

    /** The calls of each of these requests, in the calls' order (see {@link #requestOf}). */
    public static Map<String, List<RecordedCall>> byRequest(List<RecordedCall> calls, Collection<String> ids) {
        Set<String> known = Set.copyOf(ids);
        Map<String, List<RecordedCall>> byRequest = new HashMap<>();
        for (RecordedCall call : calls) {
            String id = requestOf(call, known);
            if (id != null) {
                byRequest.computeIfAbsent(id, key -> new ArrayList<>()).add(call);
            }
        }
        return byRequest;
    }

    /** When the first gateway call of each of these requests arrived; a request without a call is left out. */
    public static Map<String, Instant> firstCalls(List<RecordedCall> calls, Set<String> ids) {
        Map<String, Instant> firstCall = new HashMap<>();
        for (RecordedCall call : calls) {
            String id = requestOf(call, ids);
            if (id != null) {
                firstCall.merge(id, call.arrivedAt(), (a, b) -> a.isBefore(b) ? a : b);
            }
        }
        return firstCall;
    }

    /** Every terminal event of each of these requests received so far, in arrival order. */
    public Map<String, List<Result>> eventsByRequest(Collection<String> ids) {
        return results.stream()
                .filter(result -> ids.contains(result.requestId()))
                .collect(Collectors.groupingBy(Result::requestId));
    }

    /** The first terminal event of each of these requests received so far. */
    public Map<String, Result> firstEvents(Collection<String> ids) {
        Map<String, Result> firsts = new HashMap<>();
        results.stream()
                .filter(result -> ids.contains(result.requestId()))
                .forEach(result -> firsts.putIfAbsent(result.requestId(), result));
        return firsts;
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
        consumer.close(Duration.ofSeconds(5));
        producer.close(Duration.ofSeconds(5));
    }

    /**
     * One terminal event.
     *
     * @param topic where it came from
     * @param requestId its {@code ce_subject}
     * @param completed {@code image-completed} (else {@code image-failed})
     * @param receivedNanos {@link System#nanoTime()} when this client received it
     * @param createdAt the record's timestamp: when the worker's producer created it
     * @param body the JSON payload ({@code null} when it is not JSON)
     */
    public record Result(
            String topic, String requestId, boolean completed, long receivedNanos, Instant createdAt, JsonNode body) {

        static Result of(ConsumerRecord<byte[], byte[]> record, long receivedNanos) {
            JsonNode body;
            try {
                body = JSON.readTree(record.value());
            } catch (IOException | RuntimeException e) {
                body = null;
            }
            String subject = KafkaTestClient.header(record, "ce_subject");
            if (subject == null && body != null && body.hasNonNull("requestId")) {
                subject = body.get("requestId").asText();
            }
            return new Result(
                    record.topic(),
                    subject,
                    "image.completed".equals(KafkaTestClient.header(record, "ce_type")),
                    receivedNanos,
                    Instant.ofEpochMilli(record.timestamp()),
                    body);
        }

        /** {@code image.key} of a completed event, else {@code null}. */
        public String imageKey() {
            return text("image", "key");
        }

        /** {@code image.sha256} of a completed event, else {@code null}. */
        public String sha256() {
            return text("image", "sha256");
        }

        /** {@code error.code} of a failed event, else {@code null}. */
        public String errorCode() {
            return text("error", "code");
        }

        /** A field two levels down, as text, or {@code null}. */
        public String text(String object, String field) {
            if (body == null || !body.path(object).hasNonNull(field)) {
                return null;
            }
            return body.path(object).get(field).asText();
        }
    }
}
