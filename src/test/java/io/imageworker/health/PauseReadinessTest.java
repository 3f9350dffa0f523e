package io.imageworker.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.junit.jupiter.api.Test;

/** The intake check from the guards' states: down, with the reasons in its data, while intake cannot work. */
class PauseReadinessTest {

    @Test
    void isUpWhileNothingHoldsIntake() {
        HealthCheckResponse response = PauseReadiness.intake(Optional.empty(), 0, () -> 0, Optional.empty());

        assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
    }

    @Test
    void isDownWithTheReasonWhileTheBudgetReaderIsStalled() {
        HealthCheckResponse response = PauseReadiness.intake(
                Optional.empty(),
                0,
                () -> 0,
                Optional.of("the reader of image-worker-budget-0 failed and is restarting"));

        assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
        assertThat(response.getData().orElseThrow())
                .containsEntry("budgetReader", "the reader of image-worker-budget-0 failed and is restarting")
                .hasEntrySatisfying(
                        "reason", reason -> assertThat((String) reason).contains("cannot decide claims"));
    }

    @Test
    void givesEveryReasonWhenSeveralHoldIntake() {
        HealthCheckResponse response = PauseReadiness.intake(
                Optional.of("UNAUTHORIZED"), 3, () -> 5, Optional.of("the reader has completed no poll for 12000 ms"));

        assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
        assertThat(response.getData().orElseThrow())
                .containsEntry("pausedBy", "UNAUTHORIZED")
                .containsEntry("heldBySpendGuard", 3L)
                .containsEntry("usedCalls", 5L)
                .containsKey("budgetReader");
        assertThat((String) response.getData().orElseThrow().get("reason")).contains("token", "used up", "reader");
    }
}
