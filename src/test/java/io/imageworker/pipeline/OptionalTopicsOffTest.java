package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A worker without {@code IMAGE_WORKER_TOPIC_REQUEST_PRIORITY} and {@code IMAGE_WORKER_TOPIC_STATUS} (the defaults):
 * no consumer of a priority topic joins the group and no {@code image.started} is published. The worker of the hostile
 * corpus ({@link HostileCorpusResource}) is such a worker, so the check takes no application of its own.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(HostileCorpusResource.class)
class OptionalTopicsOffTest extends PipelineTestSupport {

    @Test
    void consumesOnlyTheRequestTopicAndPublishesNoProgress() {
        String id = newId("plain");
        kafka.send(HostileCorpusResource.TOPIC, request(id, ""));

        assertThat(body(result(id)).path("image").path("key").asText()).isEqualTo("images/" + id + ".png");
        await("no image.started").during(Duration.ofSeconds(1)).atMost(WITHIN).until(() -> kafka.statusEvents(id)
                .isEmpty());
        // A member of an earlier test's worker may linger until its session ends; this worker's stays alone.
        await("only the request topic consumed")
                .atMost(Duration.ofSeconds(45))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> consumedTopics().equals(Set.of(HostileCorpusResource.TOPIC)));
    }

    private static Set<String> consumedTopics() {
        ConsumerGroupDescription group = kafka.kafka().consumerGroups().describe(HostileCorpusResource.GROUP);
        Set<String> topics = group.members().stream()
                .flatMap(member -> member.assignment().topicPartitions().stream())
                .map(TopicPartition::topic)
                .collect(Collectors.toSet());
        group.members().forEach(member -> topics.add("client " + member.clientId()));
        topics.removeIf(topic -> topic.startsWith("client ") && !topic.contains("priority"));
        return topics;
    }
}
