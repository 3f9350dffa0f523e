package io.imageworker.messaging.parking;

import io.imageworker.ImageRequest;
import io.imageworker.config.KafkaClientConfig;
import io.imageworker.config.WorkerConfig;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.results.RecordContext;
import io.imageworker.messaging.results.ResultTransactions;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.KafkaClientService;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Parks records of the request topic (fair shares at any backlog, {@code IMAGE_WORKER_TOPIC_REQUEST_PARKED}): the
 * record is copied byte for byte, its headers too, to the parked topic, keyed by its producer and in a partition of
 * its producer's own while there are enough ({@link ParkedPartitions}: a producer's parked backlog sits in one
 * partition, and the others' parked records are not behind it), in the same Kafka
 * transaction as the offsets it completes ({@link ResultTransactions#park}, as a result is, in batches of thousands): the copy is visible
 * if and only if the source record is committed as done, so a record is parked exactly once, through kills and
 * rebalances, and costs no gateway call. The record's own key travels in the header {@link #KEY_HEADER}, so that the
 * result of the parked copy keeps it ({@link RecordContext}).
 *
 * <p>Only with transactions on: without them the copy and the commit could not be made one, and a record could be
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
    private final ResultTransactions transactions;
    private final KafkaClientService kafkaClients;
    private final String source;
    private final Optional<String> parked;
    private final ParkedPartitions partitions = new ParkedPartitions(System::nanoTime);
    /** The parked topic's partitions, once read. */
    private volatile int partitionCount;

    RequestParking(
            WorkerConfig config,
            ResultTransactions transactions,
            KafkaClientService kafkaClients,
            @Identifier("default-kafka-broker") Map<String, Object> kafka) {
        this.kafka = kafka;
        this.transactions = transactions;
        this.kafkaClients = kafkaClients;
        this.source = config.topic().request();
        this.parked = config.topic().requestParked().filter(topic -> !topic.isBlank());
        if (parked.isPresent() && !transactions.enabled()) {
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
     */
    public Optional<String> missingTopic() {
        return parked.flatMap(topic -> missingTopic(kafka, topic));
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

    /** Whether records of {@code context}'s topic may be parked: parking is on and it is the request topic. */
    public boolean parks(RecordContext context) {
        return parked.isPresent() && transactions.enabled() && source.equals(context.topic());
    }

    /**
     * Parks the record {@code context} of {@code producer} (null: none named), whose bytes are {@code value}: done
     * once its copy and its offset are committed together.
     *
     * @param id the request's id, or null for a record that is no request
     */
    public Uni<Void> park(String id, String producer, byte[] value, RecordContext context, InFlight.Run run) {
        Headers headers = new RecordHeaders(context.headers().toArray());
        headers.remove(KEY_HEADER);
        if (context.key() != null) {
            headers.add(KEY_HEADER, context.key());
        }
        String named = producer == null ? ImageRequest.DEFAULT_PRODUCER : producer;
        byte[] key = named.getBytes(StandardCharsets.UTF_8);
        return partitionCount().chain(count -> {
            int partition = partitions.of(named, count);
            ProducerRecord<byte[], byte[]> copy =
                    new ProducerRecord<>(parked.orElseThrow(), partition, key, value, headers);
            Log.debugf("Parking record %s of producer %s in partition %d", context.position(), named, partition);
            return transactions.park(id == null ? context.position() : id, run, copy);
        });
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
