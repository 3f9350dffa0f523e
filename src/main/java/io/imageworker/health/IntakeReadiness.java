package io.imageworker.health;

import io.imageworker.gateway.BudgetGuard;
import io.imageworker.gateway.GatewayGuard;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Not ready while intake pauses by design: the gateway refuses the token or the address is wrong, or the spend guard
 * holds requests for its next window. The worker is healthy then (liveness stays up, and the held records are not
 * taken for stuck ones) but does no work; the check's data says why.
 */
@Readiness
@ApplicationScoped
public class IntakeReadiness implements HealthCheck {

    private final GatewayGuard guard;
    private final BudgetGuard budget;

    IntakeReadiness(GatewayGuard guard, BudgetGuard budget) {
        this.guard = guard;
        this.budget = budget;
    }

    @Override
    public HealthCheckResponse call() {
        var builder = HealthCheckResponse.named("intake");
        List<String> reasons = new ArrayList<>();
        if (!guard.isOpen()) {
            builder.withData("pausedBy", String.valueOf(guard.pausedBy()));
            reasons.add("the gateway refuses the token or the address is wrong; it is probed and intake resumes by"
                    + " itself (see the log)");
        }
        int held = budget.held();
        if (held > 0) {
            builder.withData("heldBySpendGuard", held).withData("usedCalls", budget.used());
            reasons.add("the spend guard's budget for this window is used up (IMAGE_WORKER_BUDGET_MAX_CALLS);"
                    + " requests wait for the next window");
        }
        if (reasons.isEmpty()) {
            return builder.up().build();
        }
        return builder.down().withData("reason", String.join("; ", reasons)).build();
    }
}
