package io.imageworker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

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

    @Test
    void aMalformedSettingIsRefusedNamingThePartAtFault() {
        assertThatThrownBy(() -> ProducerBudgets.parse("edits"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("IMAGE_WORKER_BUDGET_PER_PRODUCER=edits")
                .hasMessageContaining("'edits' is not name=calls/window");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits=5"))
                .hasMessageContaining("'edits=5' is not name=calls/window");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits/1h=5"))
                .hasMessageContaining("'edits/1h' is not a producer name");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits=5/1h,"))
                .hasMessageContaining("'' is not name=calls/window");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits=0/1h"))
                .hasMessageContaining("'0', are not a whole number from 1");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits=-3/1h")).hasMessageContaining("'-3'");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits=1.5/1h")).hasMessageContaining("'1.5'");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits=5/")).hasMessageContaining("the window of edits, ''");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits=5/1w")).hasMessageContaining("'1w'");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits=5/h")).hasMessageContaining("'h'");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits=5/500ms")).hasMessageContaining("of at least 1s");
        assertThatThrownBy(() -> ProducerBudgets.parse("=5/1h")).hasMessageContaining("not a producer name");
        assertThatThrownBy(() -> ProducerBudgets.parse("a b=5/1h")).hasMessageContaining("not a producer name");
        assertThatThrownBy(() -> ProducerBudgets.parse("edits=5/1h,edits=6/1h")).hasMessageContaining("named twice");
    }
}
