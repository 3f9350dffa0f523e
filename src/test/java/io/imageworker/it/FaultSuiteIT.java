package io.imageworker.it;

import io.imageworker.testing.faults.FaultReport;
import io.imageworker.testing.faults.FaultRun;
import io.imageworker.testing.faults.FaultScenario;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The subset of the fault suite that {@code ./mvnw verify} runs ({@link FaultScenario#ci()}): 60 requests through the
 * packaged worker while 5xx, hangs, truncated bodies, expired URLs and 429 storms are injected, the worker is killed
 * with SIGKILL, the broker is stopped for 5 s, the token is revoked for 6 s and the store is down for 8 s. The same
 * engine and figures as {@code ./mvnw -Pfaults}; the figures are printed.
 */
class FaultSuiteIT {

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void nothingIsLostNorWronglyBilledWhileTheWorkerTheBrokerTheStoreAndTheTokenFail() {
        FaultScenario scenario = FaultScenario.ci();
        FaultRun.Outcome outcome = FaultRun.run(scenario, line -> System.out.println("[FaultSuiteIT] " + line));
        FaultReport report = FaultReport.of(outcome);
        report.print(System.out);

        // The scenario happened as planned: every incident, with requests caught by the revoked token.
        assertThat(outcome.happened()).hasSize(scenario.timeline().size());
        assertThat(report.figure("401-answers")).as("calls answered 401").isPositive();
        assertThat(report.figure("storm-requests"))
                .as("requests in progress while the token was revoked")
                .isPositive();
        assertThat(report.figure("faults")).as("faults taken by calls").isPositive();

        // Nothing lost, nothing contradictory, nothing wrongly billed, no wrong object, the limit held.
        assertThat(report.figure("requests")).isEqualTo(scenario.requests());
        assertThat(report.figure("missing"))
                .as("requests with no terminal event")
                .isZero();
        assertThat(report.figure("both"))
                .as("requests with completed and failed events")
                .isZero();
        assertThat(report.figure("conflicting"))
                .as("requests whose repeated events differ")
                .isZero();
        assertThat(report.figure("unauthorized")).as("UNAUTHORIZED events").isZero();
        assertThat(report.figure("storm-failed"))
                .as("requests caught by the revoked token that failed")
                .isZero();
        assertThat(report.figure("billed-unexplained"))
                .as("billed calls beyond one per request without a cause")
                .isZero();
        assertThat(report.figure("calls-after-end"))
                .as("calls after the request's terminal event")
                .isZero();
        assertThat(report.figure("billing-disagreements"))
                .as("events whose billing disagrees with the gateway")
                .isZero();
        assertThat(report.figure("objects-missing"))
                .as("completed events without their object")
                .isZero();
        assertThat(report.figure("sha-mismatches"))
                .as("objects whose sha256 disagrees")
                .isZero();
        assertThat(report.figure("peak")).as("peak concurrent image calls").isLessThanOrEqualTo(scenario.concurrency());
        assertThat(report.figure("liveness-restarts"))
                .as("restarts by the liveness supervisor")
                .isZero();
        assertThat(report.figure("uncommitted"))
                .as("request records left uncommitted")
                .isZero();
        assertThat(report.figure("ready")).as("worker ready at the end").isEqualTo(1);
        assertThat(report.violations()).isEmpty();
    }
}
