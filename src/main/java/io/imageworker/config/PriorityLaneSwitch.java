package io.imageworker.config;

import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.Priorities;
import jakarta.annotation.Priority;

/**
 * Switches the priority lane's channel on exactly when {@code IMAGE_WORKER_TOPIC_REQUEST_PRIORITY} names a topic: its
 * connector ({@code mp.messaging.incoming.priority-requests.connector}, unless set explicitly) is then Kafka's, and
 * otherwise {@link #IDLE_CONNECTOR}, which consumes nothing. One setting switches the lane, instead of a topic and a
 * flag that could disagree; an idle lane creates no Kafka consumer, so none joins the group or counts in the readiness
 * check. (Disabling the channel would leave the consumer's {@code @Channel} injection without a source, which SmallRye
 * reports at every start as a wiring problem.)
 *
 * <p>The parked topic's channel ({@code parked-requests}, {@link #PARKED_CONNECTOR}) is switched the same way by
 * {@code IMAGE_WORKER_TOPIC_REQUEST_PARKED} ({@link #PARKED_TOPIC}).
 *
 * <p>Registered with SmallRye Config's service loader ({@code META-INF/services}); it sees every configuration source,
 * the environment included.
 */
@Priority(Priorities.APPLICATION)
public class PriorityLaneSwitch implements ConfigSourceInterceptor {

    private static final long serialVersionUID = 1L;

    /** The channel's connector. */
    public static final String CONNECTOR = "mp.messaging.incoming.priority-requests.connector";

    /** The lane's topic: empty or absent, no lane. */
    public static final String TOPIC = "image-worker.topic.request-priority";

    /** The parked topic's channel's connector. */
    public static final String PARKED_CONNECTOR = "mp.messaging.incoming.parked-requests.connector";

    /** The parked topic: empty or absent, no parking. */
    public static final String PARKED_TOPIC = "image-worker.topic.request-parked";

    /** The connector of a lane that is off: a source that never emits. */
    public static final String IDLE_CONNECTOR = "image-worker-idle";

    @Override
    public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
        ConfigValue value = context.proceed(name);
        String topicName = CONNECTOR.equals(name) ? TOPIC : PARKED_CONNECTOR.equals(name) ? PARKED_TOPIC : null;
        if (topicName == null || value != null && value.getConfigSourceOrdinal() > Integer.MIN_VALUE) {
            // Not a switch, or set explicitly (defaults come at the lowest ordinal).
            return value;
        }
        ConfigValue topic = context.proceed(topicName);
        boolean on =
                topic != null && topic.getValue() != null && !topic.getValue().isBlank();
        return ConfigValue.builder()
                .withName(name)
                .withValue(on ? "smallrye-kafka" : IDLE_CONNECTOR)
                .withConfigSourceName("image-worker: " + topicName + (on ? " is set" : " is empty"))
                .build();
    }
}
