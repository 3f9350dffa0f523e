package io.imageworker.messaging.intake;

import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.Lane;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.reactive.messaging.kafka.KafkaClientService;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The subscriptions of the request lanes: each lane's stream handled with a limit of its own ({@link
 * AtMostInFlight}), {@code max-in-progress} records in progress and the read-ahead waiting for their producer's turn
 * ({@link ReadAhead}, its bytes bounded by {@link Admission}), so that a full lane requests nothing more and pauses its own Kafka consumer only; and, at
 * shutdown, their consumers paused and the subscriptions ended.
 */
@ApplicationScoped
public class Lanes {

    /** The channel of each lane. */
    static final Map<Lane, String> CHANNELS = Map.of(Lane.NORMAL, "requests", Lane.PRIORITY, "priority-requests");

    /** The channel of the parked topic, read into the normal lane. */
    static final String PARKED = "parked-requests";

    private final KafkaClientService kafkaClients;
    private final WorkerConfig config;
    private final TopicSettings topics;
    private final Admission admission;
    /** Each subscription, by its channel. */
    private final Map<String, Cancellable> subscriptions = new TreeMap<>();

    Lanes(KafkaClientService kafkaClients, WorkerConfig config, TopicSettings topics, Admission admission) {
        this.kafkaClients = kafkaClients;
        this.config = config;
        this.topics = topics;
        this.admission = admission;
    }

    /** Logs the lanes consumed and their limits. */
    public void describe() {
        Log.infof(
                "Consuming requests%s, at most %d in progress per lane (%d more read ahead) and %d gateway calls in"
                        + " flight",
                priorityOn()
                        ? " and priority requests from "
                                + topics.requestPriority().get()
                                + " (the normal lane keeps at least " + config.priorityMinShare()
                                + " of the gateway slots while both wait)"
                        : "",
                config.inProgressLimit(),
                config.readAheadLimit(),
                config.concurrency());
    }

    /** Whether the priority lane is on: its topic is configured. */
    public boolean priorityOn() {
        return topics.requestPriority().filter(topic -> !topic.isBlank()).isPresent();
    }

    /**
     * Subscribes to one lane's {@code records}, each handled by {@code handler}: at most the requests in progress plus
     * the read-ahead at once, and the waiting records' bytes bounded ({@link Admission}).
     */
    public void consume(Lane lane, Multi<Message<byte[]>> records, Handler handler) {
        subscribe(CHANNELS.get(lane), lane, records, handler, config.intakeLimit());
    }

    /**
     * Subscribes to the parked topic's {@code records}, read into the normal lane (their turns are taken among the
     * producers with the normal lane's records, their bytes in its bound), as many at once as the lane's own stream:
     * each partition of the parked topic is held to its share instead ({@code messaging.parking.ParkedHolds}), so a
     * producer's parked backlog takes about its share of the lane, and the records of producers parked after it come
     * in with their partitions' next fetch. (At most {@code IMAGE_WORKER_PARK_AFTER} at once for the whole topic, as
     * before, the backlog's records taken first held every place through their calls, and the others' parked records
     * came in only as those ended.)
     */
    public void consumeParked(Multi<Message<byte[]>> records, Handler handler) {
        subscribe(PARKED, Lane.NORMAL, records, handler, config.intakeLimit());
    }

    private void subscribe(String channel, Lane lane, Multi<Message<byte[]>> records, Handler handler, int width) {
        synchronized (subscriptions) {
            subscriptions.put(
                    channel,
                    admission
                            .taken(lane, records)
                            .subscribe()
                            .withSubscriber(new AtMostInFlight<Message<byte[]>>(
                                    width,
                                    message -> handler.handle(message, lane),
                                    failure -> Log.errorf(
                                            failure,
                                            "The %s stream failed; this worker consumes no more of it",
                                            channel.toLowerCase(Locale.ROOT)))));
        }
    }

    /** What a lane does with each record it takes. */
    @FunctionalInterface
    public interface Handler {
        /** Handles {@code message} of {@code lane}; its work waits for its producer's turn in the {@link ReadAhead}. */
        Uni<Void> handle(Message<byte[]> message, Lane lane);
    }

    /** Stops the polling of every lane's consumer, waiting at most {@code wait} for each. */
    public void pause(Duration wait) {
        for (String channel : channels()) {
            try {
                kafkaClients.getConsumer(channel).pause().await().atMost(wait);
            } catch (RuntimeException e) {
                Log.debugf("Could not pause the %s consumer: %s", channel, e.toString());
            }
        }
    }

    private List<String> channels() {
        synchronized (subscriptions) {
            return List.copyOf(subscriptions.keySet());
        }
    }

    /** Ends every lane's subscription: no record is taken any more. */
    public void cancel() {
        synchronized (subscriptions) {
            subscriptions.values().forEach(Cancellable::cancel);
        }
    }
}
