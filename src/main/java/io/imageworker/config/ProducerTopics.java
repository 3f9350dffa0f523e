package io.imageworker.config;

import io.imageworker.contract.ImageRequest;
import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.Priorities;
import jakarta.annotation.Priority;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The request topics of {@code IMAGE_WORKER_PRODUCER_IDENTITY=topic} (issue 49): each producer named in {@code
 * IMAGE_WORKER_PRODUCERS} writes to {@code <base>.<producer>}, {@code <base>} being {@code IMAGE_WORKER_TOPIC_REQUEST}
 * (or, for the priority lane, {@code IMAGE_WORKER_TOPIC_REQUEST_PRIORITY}), so that an ACL per producer decides who
 * may write as whom. In that mode the two lanes' channels subscribe to those topics, a list (SmallRye's {@code topics}
 * instead of {@code topic}), as they subscribed to one topic before: not by pattern, because two consumers of one group
 * whose pattern subscriptions differ (the lanes, the parked topic's) rebalance again and again on the Kafka client of
 * the build, and leave some partitions unread meanwhile.
 *
 * <p>A producer's name follows the contract's rule ({@link ImageRequest#PRODUCER}) and does not start with {@code .}
 * (so neither {@code .} nor {@code ..} is one: a producer's name becomes a segment of storage keys).
 *
 * <p>Registered with SmallRye Config's service loader ({@code META-INF/services}), like {@link PriorityLaneSwitch}.
 * In {@code declared} mode (the default) it changes nothing.
 */
@Priority(Priorities.APPLICATION)
public class ProducerTopics implements ConfigSourceInterceptor {

    private static final long serialVersionUID = 1L;

    /** The setting that chooses the mode. */
    public static final String MODE = "image-worker.producer-identity";

    /** The setting that names the producers. */
    public static final String PRODUCERS = "image-worker.producers";

    private static final String REQUESTS = "mp.messaging.incoming.requests.";
    private static final String PRIORITY = "mp.messaging.incoming.priority-requests.";

    /** A producer's name in a topic: the contract's rule, not starting with {@code .}. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}");

    /** Whether {@code producer} may name a producer's topics. */
    public static boolean isName(String producer) {
        return producer != null && NAME.matcher(producer).matches();
    }

    /** The request topics of {@code producers} under {@code base}: {@code <base>.<producer>} each. */
    public static List<String> topics(String base, List<String> producers) {
        List<String> topics = new ArrayList<>();
        for (String producer : producers) {
            topics.add(base + "." + producer);
        }
        return topics;
    }

    /** The producer whose topic of {@code base} {@code topic} is, or null when it is none of them. */
    public static String producerOf(String topic, String base) {
        if (topic == null || base == null || !topic.startsWith(base + ".")) {
            return null;
        }
        String producer = topic.substring(base.length() + 1);
        return isName(producer) && ImageRequest.PRODUCER.matcher(producer).matches() ? producer : null;
    }

    /** Whether {@code mode}, the value of {@link #MODE}, takes the producer from the topic. */
    static boolean fromTopic(String mode) {
        return mode != null && mode.trim().equalsIgnoreCase(WorkerConfig.ProducerIdentity.topic.name());
    }

    /** The producers {@code value} of {@link #PRODUCERS} names, as a list. */
    static List<String> producers(String value) {
        List<String> producers = new ArrayList<>();
        if (value != null) {
            for (String part : value.split(",")) {
                if (!part.isBlank()) {
                    producers.add(part.trim());
                }
            }
        }
        return producers;
    }

    @Override
    public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
        ConfigValue value = context.proceed(name);
        String prefix = name.startsWith(REQUESTS) ? REQUESTS : name.startsWith(PRIORITY) ? PRIORITY : null;
        if (prefix == null) {
            return value;
        }
        String property = name.substring(prefix.length());
        if (!property.equals("topic") && !property.equals("topics")) {
            return value;
        }
        ConfigValue mode = context.proceed(MODE);
        ConfigValue named = context.proceed(PRODUCERS);
        List<String> producers = producers(named == null ? null : named.getValue());
        if (mode == null || !fromTopic(mode.getValue()) || producers.isEmpty()) {
            // Declared producers, or no producer named (the start-up check refuses that): the topic as set.
            return value;
        }
        if (property.equals("topic")) {
            // SmallRye takes one of topic and topics.
            return null;
        }
        ConfigValue base =
                context.proceed(prefix.equals(REQUESTS) ? "image-worker.topic.request" : PriorityLaneSwitch.TOPIC);
        String baseTopic =
                base == null || base.getValue() == null || base.getValue().isBlank()
                        ? (prefix.equals(REQUESTS) ? "image-request" : null)
                        : base.getValue().trim();
        if (baseTopic == null) {
            return value;
        }
        return ConfigValue.builder()
                .withName(name)
                .withValue(String.join(",", topics(baseTopic, producers)))
                .withConfigSourceName("image-worker: " + MODE + " is topic")
                .build();
    }
}
