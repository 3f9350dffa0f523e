package io.imageworker.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.imageworker.config.ProducerTopics;
import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.messaging.results.RecordContext;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Who sent a request, as the operator chose to know it ({@code IMAGE_WORKER_PRODUCER_IDENTITY}, issue 49). In {@code
 * declared} mode (the default) nothing is done here: the request's own {@code producer} field is its producer. In
 * {@code topic} mode the producer is the one whose request topic the record arrived on ({@link ProducerTopics}: {@code
 * <request-topic>.<producer>}, the priority lane's {@code <request-priority-topic>.<producer>}), or, for a record read
 * back from the parked topic, which only the worker writes, its key (the producer it was parked as); the request's
 * {@code producer} is then set to it, so that turns, caps, weights, parking, the events and the stored keys all use
 * it, and a request whose {@code producer} names another is refused before any call.
 */
@ApplicationScoped
public class ProducerIdentities {

    private final boolean fromTopic;
    private final String requestTopic;
    private final Optional<String> priorityTopic;
    private final Optional<String> parkedTopic;

    ProducerIdentities(WorkerConfig config, TopicSettings topics) {
        this.fromTopic = config.producerIdentity() == WorkerConfig.ProducerIdentity.topic;
        this.requestTopic = topics.request();
        this.priorityTopic = topics.requestPriority().filter(topic -> !topic.isBlank());
        this.parkedTopic = topics.requestParked().filter(topic -> !topic.isBlank());
    }

    /** Whether the producer is taken from the topic. */
    public boolean fromTopic() {
        return fromTopic;
    }

    /**
     * In {@code topic} mode, makes {@code json} (the request read from {@code message}) name the producer its topic
     * authenticates, and returns why it is refused: its {@code producer} names another producer, or its topic names
     * none; null when it is not refused (and always in {@code declared} mode, which changes nothing).
     */
    public String authenticate(Message<byte[]> message, RecordContext context, JsonNode json) {
        if (!fromTopic || !(json instanceof ObjectNode request)) {
            return null;
        }
        String producer = producerOf(message, context.topic());
        JsonNode declared = request.get("producer");
        if (producer == null) {
            request.remove("producer");
            return "the topic " + context.topic() + " names no producer (IMAGE_WORKER_PRODUCER_IDENTITY=topic reads"
                    + " requests from <request-topic>.<producer>)";
        }
        request.put("producer", producer);
        if (declared != null
                && !declared.isNull()
                && !(declared.isTextual() && declared.asText().equals(producer))) {
            return "producer must be the producer of the topic the request was written to ('" + producer
                    + "'), or be left out: a request may not name another producer";
        }
        return null;
    }

    /** The producer {@code topic} authenticates, or null. */
    private String producerOf(Message<byte[]> message, String topic) {
        if (parkedTopic.filter(topic::equals).isPresent()) {
            // Written by the worker alone, keyed by the producer it parked the record as.
            byte[] key = message.getMetadata(IncomingKafkaRecordMetadata.class)
                    .map(IncomingKafkaRecordMetadata::getKey)
                    .filter(byte[].class::isInstance)
                    .map(byte[].class::cast)
                    .orElse(null);
            String parkedAs = key == null ? null : new String(key, StandardCharsets.UTF_8);
            return parkedAs == null ? null : ProducerTopics.producerOf(requestTopic + "." + parkedAs, requestTopic);
        }
        String producer = ProducerTopics.producerOf(topic, requestTopic);
        if (producer == null && priorityTopic.isPresent()) {
            producer = ProducerTopics.producerOf(topic, priorityTopic.get());
        }
        return producer;
    }
}
