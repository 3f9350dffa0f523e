package io.imageworker.messaging.parking;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.infra.Infrastructure;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.Test;

/**
 * The start-up's check of the parked topic, on a real broker (one that creates topics on first use, as the test
 * broker does): a named parked topic that does not exist stops the start-up with one line naming it and the setting,
 * and the check itself creates no topic; one that exists passes.
 */
class ParkedTopicCheckTest {

    private static final Map<String, Object> KAFKA = Map.of(
            CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
            Infrastructure.get().kafka().bootstrapServers());

    @Test
    void aMissingParkedTopicIsNamedAndNotCreated() {
        String missing = "parked-missing-" + UUID.randomUUID();

        Optional<String> problem = RequestParking.missingTopic(KAFKA, missing);

        assertThat(problem).hasValueSatisfying(line -> assertThat(line)
                .contains(missing)
                .contains("IMAGE_WORKER_TOPIC_REQUEST_PARKED")
                .contains("does not exist"));
        assertThat(RequestParking.missingTopic(KAFKA, missing))
                .as("still missing: the check created nothing")
                .isPresent();
    }

    @Test
    void anExistingParkedTopicPasses() {
        String parked = "parked-present-" + UUID.randomUUID();
        Infrastructure.get().kafka().createTopics(2, parked);

        assertThat(RequestParking.missingTopic(KAFKA, parked)).isEmpty();
    }

    @Test
    void theParkedTopicsMaxMessageBytesIsRead() throws Exception {
        String parked = "parked-limit-" + UUID.randomUUID();
        Infrastructure.get().kafka().createTopics(1, parked);
        try (Admin admin = Admin.create(KAFKA)) {
            ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, parked);
            admin.incrementalAlterConfigs(Map.of(
                            topic,
                            List.of(new AlterConfigOp(
                                    new ConfigEntry(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "500000"),
                                    AlterConfigOp.OpType.SET))))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }

        assertThat(RequestParking.topicMaxBytes(KAFKA, parked)).hasValue(500_000);
        assertThat(RequestParking.topicMaxBytes(KAFKA, "parked-missing-" + UUID.randomUUID()))
                .as("a topic that cannot be described: no bound of its own")
                .isEmpty();
    }
}
