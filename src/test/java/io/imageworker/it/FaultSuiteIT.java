package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.faults.FaultReport;
import io.imageworker.testing.faults.FaultRun;
import io.imageworker.testing.faults.FaultScenario;
import io.imageworker.testing.launch.TakesAbout;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The subset of the fault suite that {@code ./mvnw verify} runs ({@link FaultScenario#ci()}): 60 requests through the
 * packaged worker while 5xx, hangs, truncated bodies, expired URLs and 429 storms are injected, the worker is killed
 * with SIGKILL, the broker is stopped for 5 s, the token is revoked for 6 s and the store is down for 8 s (while it is
 * down, the worker's readiness must say so and its liveness must not). The same engine and figures as {@code ./mvnw
 * -Pfaults}; the figures are printed.
 */
@TakesAbout(seconds = 110)
class FaultSuiteIT {

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void nothingIsLostNorWronglyBilledWhileTheWorkerTheBrokerTheStoreAndTheTokenFail() {
        FaultScenario scenario = FaultScenario.ci();
        // On servers of its own, which it stops and starts again: the other tests of this JVM run meanwhile.
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

        // Nothing lost, nothing contradictory, nothing wrongly billed, no wrong object, the limit held. Each figure
        // the report must find zero is named here, so that one it stopped computing fails the test too.
        assertThat(report.figure("requests")).isEqualTo(scenario.requests());
        assertThat(report.mustBeZero())
                .containsKeys(
                        "missing",
                        "duplicates",
                        "both",
                        "conflicting",
                        "unauthorized",
                        "storm-failed",
                        "billed-unexplained",
                        "calls-after-end",
                        "billing-disagreements",
                        "objects-missing",
                        "sha-mismatches",
                        "liveness-restarts")
                .allSatisfy((figure, value) ->
                        assertThat(value).as(figure + " " + report.violations()).isZero());
        assertThat(report.figure("peak")).as("peak concurrent image calls").isLessThanOrEqualTo(scenario.concurrency());
        assertThat(report.figure("uncommitted"))
                .as("request records left uncommitted")
                .isZero();
        // Readiness follows the store, liveness does not (no restart by the supervisor, above), and the worker is
        // ready again once the store is back (below).
        assertThat(report.figure("unready-while-store-down"))
                .as("the worker's readiness down while the store was down")
                .isEqualTo(1);
        assertThat(report.figure("ready")).as("worker ready at the end").isEqualTo(1);
        assertThat(report.violations()).isEmpty();
    }
}
