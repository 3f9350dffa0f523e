package io.imageworker.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.util.Optional;

/**
 * The names of the topics the worker reads and writes ({@code image-worker.topic.*}, {@code IMAGE_WORKER_TOPIC_*}):
 * the request lanes and the parked topic, the results, the dead letters, the status events, the cancellations and the
 * spend guard's log. Read by the Kafka half ({@code messaging} and its sub-packages), the cancellations of {@code
 * processing}, the status queries' standings ({@code api}), the start-up check ({@code health}) and the console; so it
 * lives here, below them all. The priority lane's and the parked topic's channels are switched on by their names
 * ({@link PriorityLaneSwitch}), and the channels' {@code topic} attributes take these names in application.properties.
 */
@ConfigMapping(prefix = "image-worker.topic")
public interface TopicSettings {

    /** Requests are consumed from here. */
    @WithDefault("image-request")
    String request();

    /** {@code image-completed} events go here. */
    @WithDefault("image-completed")
    String completed();

    /** {@code image-failed} events go here. */
    @WithDefault("image-failed")
    String failed();

    /** Records that cannot be read as a request go here, byte for byte. */
    @WithDefault("image-request-dlq")
    String dlq();

    /**
     * The priority lane (contract v1.1): requests consumed from this topic, beside {@link #request()} and in the
     * same consumer group, get a free gateway slot before those of the normal lane (see
     * {@link WorkerConfig#priorityMinShare()}). Each lane has its own intake and its own limit of requests in
     * progress, so a full normal backlog never stops the priority lane's. Empty: no priority lane.
     */
    Optional<String> requestPriority();

    /**
     * Parking (fair shares at any backlog): a record of {@link #request()} that lies beyond its partition's window
     * ({@link WorkerConfig#offsetWindow()}), or whose producer already has {@link WorkerConfig#parkAfter()}
     * records waiting for their turn, is copied byte for byte to this topic, keyed by its producer, in the same
     * transaction that commits its offset; this topic is consumed in the same group and lane, and its records take
     * their turns like any other (they are never parked again). Needs transactions; empty: no parking.
     */
    Optional<String> requestParked();

    /**
     * {@code image.started} events (contract v1.1) go here: one when a request's first gateway call of an attempt
     * leaves, never waited for. Empty: none are published.
     */
    Optional<String> status();

    /**
     * Cancellations (contract v1.2): records {@code {"requestId": "..."}} keyed by {@code requestId}, on a
     * compacted topic, read by every replica from all its partitions (no consumer group). A request named there
     * before any gateway call of it was made ends {@code CANCELLED}. Empty: no cancellation.
     */
    Optional<String> cancel();

    /**
     * The spend guard's log, used only when {@code budget.max-calls} is set: every replica that names the same
     * topic shares one budget, and a restarted replica finds the window's count in it. Partition 0 is used; keep
     * records at least two windows ({@code cleanup.policy=delete}, not compacted).
     */
    @WithDefault("image-worker-budget")
    String budget();
}
