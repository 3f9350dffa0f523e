package io.imageworker.messaging.intake;

import io.imageworker.Lane;
import io.imageworker.config.WorkerConfig;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.reactive.messaging.kafka.KafkaClientService;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The subscriptions of the request lanes: each lane's stream merged with a limit of its own, {@code max-in-progress}
 * records in progress and the read-ahead waiting for their producer's turn ({@link ReadAhead}), so that a full lane requests nothing more and pauses its own Kafka consumer only; and, at
 * shutdown, their consumers paused and the subscriptions ended.
 */
@ApplicationScoped
public class Lanes {

    /** The channel of each lane. */
    static final Map<Lane, String> CHANNELS = Map.of(Lane.NORMAL, "requests", Lane.PRIORITY, "priority-requests");

    private final KafkaClientService kafkaClients;
    private final WorkerConfig config;
    private final ReadAhead readAhead;
    private final Map<Lane, Cancellable> subscriptions = new EnumMap<>(Lane.class);

    Lanes(KafkaClientService kafkaClients, WorkerConfig config, ReadAhead readAhead) {
        this.kafkaClients = kafkaClients;
        this.config = config;
        this.readAhead = readAhead;
    }

    /** Logs the lanes consumed and their limits. */
    public void describe() {
        Log.infof(
                "Consuming requests%s, at most %d in progress per lane (%d more read ahead) and %d gateway calls in"
                        + " flight",
                priorityOn()
                        ? " and priority requests from "
                                + config.topic().requestPriority().get()
                                + " (the normal lane keeps at least " + config.priorityMinShare()
                                + " of the gateway slots while both wait)"
                        : "",
                config.inProgressLimit(),
                config.readAheadLimit(),
                config.concurrency());
    }

    /** Whether the priority lane is on: its topic is configured. */
    public boolean priorityOn() {
        return config.topic()
                .requestPriority()
                .filter(topic -> !topic.isBlank())
                .isPresent();
    }

    /**
     * Subscribes to one lane's {@code records}, each handled by {@code handler}: at most the requests in progress plus
     * the read-ahead at once, and the waiting records' bytes bounded ({@link ReadAhead}).
     */
    public void consume(Lane lane, Multi<Message<byte[]>> records, Handler handler) {
        synchronized (subscriptions) {
            subscriptions.put(
                    lane,
                    readAhead
                            .taken(lane, records)
                            .onItem()
                            .transformToUni(message -> handler.handle(message, lane))
                            .merge(config.intakeLimit())
                            .subscribe()
                            .with(
                                    ignored -> {},
                                    failure -> Log.errorf(
                                            failure,
                                            "The %s request stream failed; this worker consumes no more of it",
                                            lane.name().toLowerCase(Locale.ROOT))));
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
        for (Lane lane : lanes()) {
            try {
                kafkaClients.getConsumer(CHANNELS.get(lane)).pause().await().atMost(wait);
            } catch (RuntimeException e) {
                Log.debugf("Could not pause the %s consumer: %s", CHANNELS.get(lane), e.toString());
            }
        }
    }

    private List<Lane> lanes() {
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
