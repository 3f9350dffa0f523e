package io.imageworker.health;

import io.imageworker.gateway.GatewayGuard;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Not ready while intake is paused because the gateway refuses the token or the address is wrong. */
@Readiness
@ApplicationScoped
public class GatewayReadiness implements HealthCheck {

    private final GatewayGuard guard;

    GatewayReadiness(GatewayGuard guard) {
        this.guard = guard;
    }

    @Override
    public HealthCheckResponse call() {
        var builder = HealthCheckResponse.named("gateway");
        if (guard.isOpen()) {
            return builder.up().build();
        }
        return builder.down()
                .withData("pausedBy", String.valueOf(guard.pausedBy()))
                .build();
    }
}
