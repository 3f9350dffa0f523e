package io.imageworker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "edits           | 'edits' is not name=weight",
                "edits=4,        | '' is not name=weight",
                "edits=0         | from 1 to 1000",
                "edits=-2        | '-2'",
                "edits=1.5       | '1.5'",
                "edits=1001      | from 1 to 1000",
                "edits=          | ''",
                "=3              | not a producer name",
                "a b=3           | not a producer name",
                "edits=1,edits=2 | named twice",
            })
    void refusesAMalformedSettingNamingItAndThePartAtFault(String setting, String fault) {
        assertRefused(setting, fault);
    }

    @Test
    void refusesANameOfMoreThan64Characters() {
        assertRefused("x".repeat(65) + "=3", "not a producer name");
    }

    private static void assertRefused(String setting, String fault) {
        assertThatThrownBy(() -> ProducerWeights.parse(setting))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("IMAGE_WORKER_PRODUCER_WEIGHTS=" + setting)
                .hasMessageContaining(fault);
    }
}
