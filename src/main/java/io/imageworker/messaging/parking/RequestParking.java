package io.imageworker.messaging.parking;

import io.imageworker.config.KafkaClientConfig;
import io.imageworker.config.ProducerTopics;
import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ImageRequest;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.results.RecordContext;
import io.imageworker.messaging.results.ResultPublisher;
import io.imageworker.messaging.results.ResultSink;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.KafkaClientService;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.AbstractRecords;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.RecordBatch;

/**
 * Parks records of the request topic (fair shares at any backlog, {@code IMAGE_WORKER_TOPIC_REQUEST_PARKED}): the
 * record is copied byte for byte, its headers too, to the parked topic, keyed by its producer and in a partition of
 * its producer's own while there are enough ({@link ParkedPartitions}: a producer's parked backlog sits in one
 * partition, and the others' parked records are not behind it; a request parked here lately goes where it went
 * then, so that one owner reads all its copies), in the same Kafka
 * transaction as the offsets it completes (the result sink's {@link ResultSink#parker}, as a result is, in batches of
 * thousands): the copy is visible
 * if and only if the source record is committed as done, so a record is parked exactly once, through kills and
 * rebalances, and costs no gateway call. The record's own key travels in the header {@link #KEY_HEADER}, so that the
 * result of the parked copy keeps it ({@link RecordContext}).
 *
 * <p>Only with transactions on (the transactional result sink, the one whose {@link ResultSink#parker} is present):
 * without them the copy and the commit could not be made one, and a record could be
 * parked twice or, worse, committed without its copy; the worker then parks nothing (the window waits as before) but
 * still reads the parked topic, for what was parked before. Records of the parked topic (and of the priority lane) are
 * never parked.
 */
@ApplicationScoped
public class RequestParking {

    /** The header that carries a parked record's own key (absent: the record had none). */
    static final String KEY_HEADER = RecordContext.PARKED_KEY_HEADER;

    /** The parked topic's channel, whose consumer says how many partitions the topic has. */
    static final String CHANNEL = "parked-requests";

    /** How long the start-up asks the broker whether the parked topic exists. */
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

    private final Map<String, Object> kafka;
    /** How a copy is committed with its record's offset; empty: the result sink cannot, and nothing is parked. */
    private final Optional<ResultSink.Parker> parker;

    private final KafkaClientService kafkaClients;
    private final String source;
    private final Optional<String> parked;
    private final ParkedPartitions partitions = new ParkedPartitions(System::nanoTime);
    /** The largest record the worker's producers send ({@code max.request.size}). */
    private final int maxRecordBytes;
    /** The parked topic's {@code max.message.bytes}, once read at start ({@link #missingTopic()}); else no bound. */
    /** Whether the producer is taken from the topic: the request topics are {@code <source>.<producer>}. */
    private final boolean perProducer;

    private volatile int topicMaxBytes = Integer.MAX_VALUE;
    /** The parked topic's partitions, once read. */
    private volatile int partitionCount;

    RequestParking(
            WorkerConfig config,
            TopicSettings topics,
            ResultSink sink,
            KafkaClientService kafkaClients,
            @Identifier("default-kafka-broker") Map<String, Object> kafka) {
        this.kafka = kafka;
        this.parker = sink.parker();
        this.kafkaClients = kafkaClients;
        this.source = topics.request();
        this.perProducer = config.producerIdentity() == WorkerConfig.ProducerIdentity.topic;
        this.parked = topics.requestParked().filter(topic -> !topic.isBlank());
        this.maxRecordBytes = ResultPublisher.maxRecordBytes(kafka);
        if (parked.isPresent() && parker.isEmpty()) {
            Log.warnf(
                    "IMAGE_WORKER_TOPIC_REQUEST_PARKED is set but transactions are off: no record is parked (a copy"
                            + " and its offset could not be committed as one); %s is still read",
                    parked.get());
        }
    }

    /** Whether the parked topic is read: it is named. */
    public boolean reads() {
        return parked.isPresent();
    }

    /** The parked topic, or null. */
    public String topic() {
        return parked.orElse(null);
    }

    /**
     * Why parking cannot start, or empty: the parked topic is named but does not exist. The worker does not create
     * it (its partitions are the deployment's choice: as many as producers that flood at once); without it every park
     * would wait for the topic's metadata and fail its transaction, so the worker refuses to start instead, in one
     * line. The broker is asked by an admin client, which creates no topic (a consumer's metadata request may, on a
     * broker that creates topics on first use). A broker that does not answer in time is no reason to refuse: the
     * parks will tell.
     *
     * <p>Of a topic that exists, it reads {@code max.message.bytes} too, the largest record batch the broker takes
     * there, which {@link #tooLargeToPark} holds a copy to beside the producer's {@code max.request.size}.
     */
    public Optional<String> missingTopic() {
        Optional<String> missing = parked.flatMap(topic -> missingTopic(kafka, topic));
        if (missing.isEmpty() && parked.isPresent()) {
            topicMaxBytes(kafka, parked.get()).ifPresent(max -> topicMaxBytes = max);
        }
        return missing;
    }

    /**
     * The {@code max.message.bytes} of {@code topic} on the broker of {@code kafka}, or empty when it cannot be read
     * (no answer in time, no {@code DescribeConfigs} right): copies are then held to the producer's bound alone.
     */
    static OptionalInt topicMaxBytes(Map<String, Object> kafka, String topic) {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = Admin.create(KafkaClientConfig.of(kafka, AdminClientConfig.configNames(), Map.of()))) {
            Config config = admin.describeConfigs(List.of(resource))
                    .all()
                    .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .get(resource);
            ConfigEntry entry = config == null ? null : config.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
            if (entry == null || entry.value() == null) {
                return OptionalInt.empty();
            }
            return OptionalInt.of(Integer.parseInt(entry.value().trim()));
        } catch (ExecutionException | TimeoutException | NumberFormatException e) {
            Log.warnf(
                    "Could not read max.message.bytes of the parked topic %s (%s); parked copies are held to"
                            + " max.request.size alone",
                    topic, e.toString());
            return OptionalInt.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return OptionalInt.empty();
        }
    }

    /** Why {@code topic} cannot be parked into on the broker of {@code kafka}: it does not exist; or empty. */
    static Optional<String> missingTopic(Map<String, Object> kafka, String topic) {
        try (Admin admin = Admin.create(KafkaClientConfig.of(kafka, AdminClientConfig.configNames(), Map.of()))) {
            Set<String> names = admin.listTopics().names().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            return names.contains(topic)
                    ? Optional.empty()
                    : Optional.of("the parked topic " + topic + " (IMAGE_WORKER_TOPIC_REQUEST_PARKED) does not exist:"
                            + " create it (the chart's topic job does), or set IMAGE_WORKER_TOPIC_REQUEST_PARKED empty"
                            + " to park nothing");
        } catch (ExecutionException | TimeoutException e) {
            Log.warnf("Could not check that the parked topic %s exists (%s); going on", topic, e.toString());
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /**
     * Whether records of {@code context}'s topic may be parked: parking is on and it is the request topic (with the
     * producer taken from the topic, one of the producers' request topics: {@link ProducerTopics}).
     */
    public boolean parks(RecordContext context) {
        return parked.isPresent() && parker.isPresent() && isRequestTopic(context.topic());
    }

    private boolean isRequestTopic(String topic) {
        return perProducer ? ProducerTopics.producerOf(topic, source) != null : source.equals(topic);
    }

    /**
     * Parks the record {@code context} of {@code producer} (null: none named), whose bytes are {@code value}: done
     * once its copy and its offset are committed together. A request parked here lately goes into the partition its
     * earlier copy went to ({@link ParkedPartitions#of(String, String, int)}).
     *
     * @param id the request's id, or null for a record that is no request
     */
    public Uni<Void> park(String id, String producer, byte[] value, RecordContext context, InFlight.Run run) {
        String named = named(producer);
        return partitionCount().chain(count -> {
            int partition = partitions.of(named, id, count);
            ProducerRecord<byte[], byte[]> copy = copy(named, value, context, partition);
            Log.debugf("Parking record %s of producer %s in partition %d", context.position(), named, partition);
            return parker.orElseThrow().park(id == null ? context.position() : id, run, copy);
        });
    }

    /**
     * Why the record {@code context} of {@code producer} (null: none named), whose bytes are {@code value}, cannot be
     * parked, or null when it can. Its copy carries its producer as its key and its own key in the header {@link
     * #KEY_HEADER}: a record near Kafka's limit fits the request topic but its copy may not, and Kafka refuses such a
     * copy at every try, which held the lane's transactions for the infrastructure patience and then failed the
     * channel. So the copy's size, as Kafka's producer reckons it, is held to the producer's {@code max.request.size}
     * and the parked topic's {@code max.message.bytes} before anything is sent; the caller answers a record that
     * does not fit at once instead of parking it.
     */
    public String tooLargeToPark(String producer, byte[] value, RecordContext context) {
        ProducerRecord<byte[], byte[]> copy = copy(named(producer), value, context, 0);
        int size = AbstractRecords.estimateSizeInBytesUpperBound(
                RecordBatch.CURRENT_MAGIC_VALUE,
                CompressionType.NONE,
                copy.key(),
                copy.value(),
                copy.headers().toArray());
        int limit = Math.min(maxRecordBytes, topicMaxBytes);
        if (size <= limit) {
            return null;
        }
        return "the record is too large to be queued fairly: its copy to the parked topic would take " + size
                + " bytes with its producer as key and its own key in the " + KEY_HEADER + " header, more than Kafka"
                + " takes there (" + limit + " bytes: "
                + (limit == maxRecordBytes ? "max.request.size" : "the parked topic's max.message.bytes")
                + "); send it smaller";
    }

    private static String named(String producer) {
        return producer == null ? ImageRequest.DEFAULT_PRODUCER : producer;
    }

    /** The parked copy of the record {@code context} of producer {@code named}, for {@code partition}. */
    private ProducerRecord<byte[], byte[]> copy(String named, byte[] value, RecordContext context, int partition) {
        Headers headers = new RecordHeaders(context.headers().toArray());
        headers.remove(KEY_HEADER);
        if (context.key() != null) {
            headers.add(KEY_HEADER, context.key());
        }
        return new ProducerRecord<>(
                parked.orElseThrow(), partition, named.getBytes(StandardCharsets.UTF_8), value, headers);
    }

    /** The parked topic's partitions: read once from its consumer's metadata. */
    private Uni<Integer> partitionCount() {
        int known = partitionCount;
        if (known > 0) {
            return Uni.createFrom().item(known);
        }
        return kafkaClients
                .getConsumer(CHANNEL)
                .partitionsFor(parked.orElseThrow())
                .map(infos -> {
                    partitionCount = Math.max(1, infos.size());
                    return partitionCount;
                });
    }
}
