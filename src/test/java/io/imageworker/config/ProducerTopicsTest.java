package io.imageworker.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The per-producer request topics of {@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}. */
class ProducerTopicsTest {

    @Test
    void eachProducerHasATopicUnderTheBase() {
        assertThat(ProducerTopics.topics("image-request", ProducerTopics.producers(" catalogue, edits ,")))
                .containsExactly("image-request.catalogue", "image-request.edits");
        assertThat(ProducerTopics.producers("")).isEmpty();
        assertThat(ProducerTopics.producers(null)).isEmpty();
    }

    @Test
    void aProducersNameIsTheContractsRuleNotStartingWithADot() {
        assertThat(ProducerTopics.isName("edits_2-b.x")).isTrue();
        assertThat(ProducerTopics.isName(".")).isFalse();
        assertThat(ProducerTopics.isName("..")).isFalse();
        assertThat(ProducerTopics.isName(".hidden")).isFalse();
        assertThat(ProducerTopics.isName("team a")).isFalse();
        assertThat(ProducerTopics.isName("p".repeat(65))).isFalse();
        assertThat(ProducerTopics.isName(null)).isFalse();
    }

    @Test
    void theProducerIsTheSuffixOfTheBaseTopic() {
        assertThat(ProducerTopics.producerOf("image-request.catalogue", "image-request"))
                .isEqualTo("catalogue");
        assertThat(ProducerTopics.producerOf("team.requests.a", "team.requests"))
                .isEqualTo("a");
        assertThat(ProducerTopics.producerOf("image-request", "image-request")).isNull();
        assertThat(ProducerTopics.producerOf("image-request.", "image-request")).isNull();
        assertThat(ProducerTopics.producerOf("image-request..", "image-request"))
                .isNull();
        assertThat(ProducerTopics.producerOf("image-request-parked", "image-request"))
                .isNull();
        assertThat(ProducerTopics.producerOf("other.a", "image-request")).isNull();
    }
}
