package io.imageworker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class ProducerWeightsTest {

    @Test
    void namesWeighWhatTheSettingSaysAndOthersOne() {
        ProducerWeights weights = ProducerWeights.parse(" catalogue = 1 , edits=4,team.b_2-x=7");

        assertThat(weights.of("catalogue")).isEqualTo(1);
        assertThat(weights.of("edits")).isEqualTo(4);
        assertThat(weights.of("team.b_2-x")).isEqualTo(7);
        assertThat(weights.of("default")).isEqualTo(1);
        assertThat(weights.of("someone-else")).isEqualTo(1);
        assertThat(weights.named()).containsOnlyKeys("catalogue", "edits", "team.b_2-x");
    }

    @Test
    void emptyOrAbsentWeighsEveryoneOne() {
        assertThat(ProducerWeights.of(Optional.empty()).named()).isEmpty();
        assertThat(ProducerWeights.parse("  ").named()).isEmpty();
        assertThat(ProducerWeights.parse("").of("edits")).isEqualTo(1);
    }

    @Test
    void refusesAMalformedSettingNamingItAndThePartAtFault() {
        assertThatThrownBy(() -> ProducerWeights.parse("edits"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("IMAGE_WORKER_PRODUCER_WEIGHTS=edits")
                .hasMessageContaining("'edits' is not name=weight");
        assertThatThrownBy(() -> ProducerWeights.parse("edits=4,")).hasMessageContaining("'' is not name=weight");
        assertThatThrownBy(() -> ProducerWeights.parse("edits=0")).hasMessageContaining("from 1 to 1000");
        assertThatThrownBy(() -> ProducerWeights.parse("edits=-2")).hasMessageContaining("'-2'");
        assertThatThrownBy(() -> ProducerWeights.parse("edits=1.5")).hasMessageContaining("'1.5'");
        assertThatThrownBy(() -> ProducerWeights.parse("edits=1001")).hasMessageContaining("from 1 to 1000");
        assertThatThrownBy(() -> ProducerWeights.parse("edits=")).hasMessageContaining("''");
        assertThatThrownBy(() -> ProducerWeights.parse("=3")).hasMessageContaining("not a producer name");
        assertThatThrownBy(() -> ProducerWeights.parse("a b=3")).hasMessageContaining("not a producer name");
        assertThatThrownBy(() -> ProducerWeights.parse("x".repeat(65) + "=3"))
                .hasMessageContaining("not a producer name");
        assertThatThrownBy(() -> ProducerWeights.parse("edits=1,edits=2")).hasMessageContaining("named twice");
    }
}
