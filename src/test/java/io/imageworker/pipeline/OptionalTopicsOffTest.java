package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.WorkerTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A worker without {@code IMAGE_WORKER_TOPIC_REQUEST_PRIORITY} and {@code IMAGE_WORKER_TOPIC_STATUS} (the defaults):
 * no consumer of a priority topic joins the group and no {@code image.started} is published.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(OptionalTopicsOffTest.WithoutOptionalTopics.class)
class OptionalTopicsOffTest extends PipelineTestSupport {

    /** The tests' servers and settings, without the two optional topics. */
    public static class WithoutOptionalTopics extends WorkerTestResource {
        @Override
        public Map<String, String> start() {
            Map<String, String> config = super.start();
            config.remove("image-worker.topic.request-priority");
            config.remove("image-worker.topic.status");
            return config;
        }
    }

    @Test
    void consumesOnlyTheRequestTopicAndPublishesNoProgress() {
        String id = newId("plain");
        send(request(id, ""));

        assertThat(body(result(id)).path("image").path("key").asText()).isEqualTo("images/" + id + ".png");
        await("no image.started").during(Duration.ofSeconds(1)).atMost(WITHIN).until(() -> kafka.statusEvents(id)
                .isEmpty());
        // A member of an earlier test's worker may linger until its session ends; this worker's stays alone.
        await("only the request topic consumed")
                .atMost(Duration.ofSeconds(45))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> consumedTopics().equals(Set.of(WorkerTestResource.REQUESTS)));
    }

    private static Set<String> consumedTopics() {
        ConsumerGroupDescription group = kafka.kafka().consumerGroups().describe("image-worker");
        Set<String> topics = group.members().stream()
                .flatMap(member -> member.assignment().topicPartitions().stream())
                .map(TopicPartition::topic)
                .collect(Collectors.toSet());
        group.members().forEach(member -> topics.add("client " + member.clientId()));
        topics.removeIf(topic -> topic.startsWith("client ") && !topic.contains("priority"));
        return topics;
    }
}
