package io.imageworker.testing.faults;

import io.imageworker.testing.launch.LaunchLogging;

/**
 * The fault suite, {@code ./mvnw -Pfaults}: a few hundred requests through the packaged worker while faults are
 * injected and the worker, the broker, the store and the token fail on a timeline ({@link FaultScenario#full()});
 * prints the figures that show nothing was lost and nothing wrongly billed ({@link FaultReport}). About three
 * minutes.
 *
 * <p>Sizes: {@code -Dfaults.requests=300 -Dfaults.publish-over-s=150 -Dfaults.concurrency=16
 * -Dfaults.latency-min-ms=500 -Dfaults.latency-max-ms=2000 -Dfaults.fault-every-calls=6 -Dfaults.seed=5};
 * {@code -Dfaults.scenario=ci} runs the subset that {@code FaultSuiteIT} runs instead.
 *
 * <p>Exit status 0 when every must-be-zero figure is zero, 1 otherwise.
 */
public final class FaultSuite {

    private FaultSuite() {}

    public static void main(String[] args) {
        LaunchLogging.quiet();
        FaultScenario scenario = "ci".equals(System.getProperty("faults.scenario"))
                ? FaultScenario.ci()
                : FaultScenario.fromSystemProperties();
        System.out.println("[faults] scenario " + scenario.name() + ":");
        scenario.describeTimeline().forEach(line -> System.out.println("[faults]   " + line));
        FaultReport report = FaultReport.of(FaultRun.run(scenario, line -> {
            System.out.println("[faults] " + line);
            System.out.flush();
        }));
        report.print(System.out);
        System.exit(report.violations().isEmpty() ? 0 : 1);
    }
}
