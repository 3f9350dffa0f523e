package io.imageworker.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.TopicSettings;
import io.imageworker.testing.TestConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Where the console's cancels go: the cancel topic, or the request's producer's own in topic mode (issue 49). */
class ConsoleActionsTest {

    @Test
    void aCancelGoesToTheCancelTopicOfTheRequestsProducerWhenProducersAreToldByTopic() {
        Map<String, String> topicMode = Map.of(
                "image-worker.producer-identity", "topic",
                "image-worker.producers", "catalogue,edits",
                "image-worker.topic.cancel", "image-cancel");
        ConsoleActions perProducer = new ConsoleActions(
                TestConfig.worker(topicMode),
                TestConfig.settings(TopicSettings.class, topicMode),
                TestConfig.settings(ConsoleSettings.class, topicMode),
                Map.of(),
                new ObjectMapper());

        assertThat(perProducer.cancelTopicOf("edits")).isEqualTo("image-cancel.edits");
        // No producer of the worker's: the shared topic, which no worker reads then (nothing is stopped).
        assertThat(perProducer.cancelTopicOf("other")).isEqualTo("image-cancel");
        assertThat(perProducer.cancelTopicOf(null)).isEqualTo("image-cancel");

        Map<String, String> declaredMode = Map.of("image-worker.topic.cancel", "image-cancel");
        ConsoleActions declared = new ConsoleActions(
                TestConfig.worker(declaredMode),
                TestConfig.settings(TopicSettings.class, declaredMode),
                TestConfig.settings(ConsoleSettings.class, declaredMode),
                Map.of(),
                new ObjectMapper());
        assertThat(declared.cancelTopicOf("edits")).isEqualTo("image-cancel");
    }
}
