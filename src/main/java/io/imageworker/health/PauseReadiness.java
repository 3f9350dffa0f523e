package io.imageworker.health;

import io.imageworker.gateway.GatewayGuard;
import io.imageworker.spend.BudgetGuard;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntSupplier;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Not ready while intake pauses by design: the gateway refuses the token or the address is wrong, or the spend guard
 * holds requests for its next window; and not ready while the spend guard cannot decide claims because the reader of
 * its shared budget is restarting or stalled (calls wait then, each claim timing out and tried again, with nothing
 * else to show it). The worker is healthy then (liveness stays up, and the held records are not taken for stuck ones)
 * but does no work; the check's data says why.
 */
@Readiness
@ApplicationScoped
public class PauseReadiness implements HealthCheck {

    private final GatewayGuard guard;
    private final BudgetGuard budget;

    PauseReadiness(GatewayGuard guard, BudgetGuard budget) {
        this.guard = guard;
        this.budget = budget;
    }

    @Override
    public HealthCheckResponse call() {
        return intake(
                guard.isOpen() ? Optional.empty() : Optional.of(String.valueOf(guard.pausedBy())),
                budget.held(),
                budget::used,
                budget.readerStall());
    }

    /**
     * The check from the guards' states: the gateway fault intake is paused by, the requests the spend guard holds
     * (and the calls used in its window, read only when it holds some), and why its budget reader is stalled.
     */
    static HealthCheckResponse intake(
            Optional<String> pausedBy, int held, IntSupplier usedCalls, Optional<String> budgetReaderStall) {
        var builder = HealthCheckResponse.named("intake");
        List<String> reasons = new ArrayList<>();
        if (pausedBy.isPresent()) {
            builder.withData("pausedBy", pausedBy.get());
            reasons.add("the gateway refuses the token or the address is wrong; it is probed and intake resumes by"
                    + " itself (see the log)");
        }
        if (held > 0) {
            builder.withData("heldBySpendGuard", held).withData("usedCalls", usedCalls.getAsInt());
            reasons.add("the spend guard's budget for this window is used up (IMAGE_WORKER_BUDGET_MAX_CALLS);"
                    + " requests wait for the next window");
        }
        if (budgetReaderStall.isPresent()) {
            builder.withData("budgetReader", budgetReaderStall.get());
            reasons.add("the spend guard cannot decide claims: its reader of the shared budget is stalled; calls"
                    + " wait and it restarts by itself (see the log)");
        }
        if (reasons.isEmpty()) {
            return builder.up().build();
        }
        return builder.down().withData("reason", String.join("; ", reasons)).build();
    }
}
