package io.imageworker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProducerBudgetsTest {

    @Test
    void namedProducersGetTheirCapsAndWindowsOthersNone() {
        ProducerBudgets budgets =
                ProducerBudgets.parse(" catalogue = 5000 / 1h , edits=200/10m,team.b_2-x=3/30s,d=1/2d");

        assertThat(budgets.of("catalogue")).contains(new ProducerBudgets.Cap(5000, Duration.ofHours(1)));
        assertThat(budgets.of("edits")).contains(new ProducerBudgets.Cap(200, Duration.ofMinutes(10)));
        assertThat(budgets.of("team.b_2-x")).contains(new ProducerBudgets.Cap(3, Duration.ofSeconds(30)));
        assertThat(budgets.of("d")).contains(new ProducerBudgets.Cap(1, Duration.ofDays(2)));
        assertThat(budgets.of("default")).isEmpty();
        assertThat(budgets.named()).containsOnlyKeys("catalogue", "edits", "team.b_2-x", "d");
        assertThat(ProducerBudgets.parse("x=1/1500ms").of("x"))
                .contains(new ProducerBudgets.Cap(1, Duration.ofMillis(1500)));
    }

    @Test
    void theBeansBuiltAtStartReadAMalformedSettingAsNoneAndLeaveItToTheStartUpCheck() {
        assertThat(ProducerBudgets.orNone(Optional.of("edits")).isEmpty()).isTrue();
        assertThat(ProducerBudgets.orNone(Optional.of("edits=2/1m")).of("edits"))
                .isPresent();
    }

    @Test
    void emptyOrAbsentCapsNoOne() {
        assertThat(ProducerBudgets.of(Optional.empty()).isEmpty()).isTrue();
        assertThat(ProducerBudgets.parse("  ").named()).isEmpty();
        assertThat(ProducerBudgets.of(Optional.of("")).of("edits")).isEmpty();
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "edits                 | 'edits' is not name=calls/window",
                "edits=5               | 'edits=5' is not name=calls/window",
                "edits/1h=5            | 'edits/1h' is not a producer name",
                "edits=5/1h,           | '' is not name=calls/window",
                "edits=0/1h            | '0', are not a whole number from 1",
                "edits=-3/1h           | '-3'",
                "edits=1.5/1h          | '1.5'",
                "edits=5/              | the window of edits, ''",
                "edits=5/1w            | '1w'",
                "edits=5/h             | 'h'",
                "edits=5/500ms         | of at least 1s",
                "=5/1h                 | not a producer name",
                "a b=5/1h              | not a producer name",
                "edits=5/1h,edits=6/1h | named twice",
            })
    void aMalformedSettingIsRefusedNamingThePartAtFault(String setting, String fault) {
        assertThatThrownBy(() -> ProducerBudgets.parse(setting))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("IMAGE_WORKER_BUDGET_PER_PRODUCER=" + setting)
                .hasMessageContaining(fault);
    }
}
