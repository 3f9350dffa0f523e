package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRuleSpec;
import io.fabric8.openshift.api.model.monitoring.v1.Rule;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.testing.ObservabilityFiles;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The dashboard and the alert rules as files: well-formed, strict about their fields, each query reading a metric.
 * That every metric they name is one the worker really exports is MetricsExportTest's part (it scrapes a worker).
 */
class ObservabilityFilesTest {

    @Test
    void theAlertRulesAreAPrometheusRuleSpecWithNoUnknownField() throws IOException {
        PrometheusRuleSpec spec = StrictManifests.rules(Files.readString(ObservabilityFiles.ALERTS));

        List<Rule> rules = spec.getGroups().get(0).getRules();
        assertThat(rules).allSatisfy(rule -> {
            assertThat(rule.getAlert()).matches("ImageWorker[A-Za-z]+");
            assertThat(rule.getExpr().getStrVal()).isNotBlank();
            assertThat(rule.getLabels()).containsKey("severity");
            assertThat(rule.getAnnotations()).containsKeys("summary", "description");
        });
    }

    @Test
    void aMisspeltRuleFieldFailsTheRead() throws IOException {
        String misspelt = Files.readString(ObservabilityFiles.ALERTS).replaceFirst("annotations:", "anotations:");

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> StrictManifests.rules(misspelt))
                .hasMessageContaining("anotations");
    }

    @Test
    void alertOnTheStatesThatMatterMost() {
        Set<String> alerts = new TreeSet<>();
        ObservabilityFiles.alerts().path("groups").forEach(g -> g.path("rules")
                .forEach(r -> alerts.add(r.path("alert").asText())));
        JsonNode rules = ObservabilityFiles.alerts();

        assertThat(alerts)
                .contains(
                        "ImageWorkerIntakePaused",
                        "ImageWorkerSpendGuardHolding",
                        "ImageWorkerDeadLetters",
                        "ImageWorkerConsumerLagGrowing",
                        "ImageWorkerConcurrencyLimitLowered",
                        "ImageWorkerErrorRateHigh",
                        "ImageWorkerCancelReaderStalled",
                        "ImageWorkerProducerHeld",
                        "ImageWorkerSideTopicRecordsSkipped",
                        "ImageWorkerCancelsDropped",
                        "ImageWorkerParkedBacklogStuck",
                        "ImageWorkerTransactionsInDoubt",
                        "ImageWorkerTransactionsFailing",
                        "ImageWorkerPodUnready",
                        "ImageWorkerScrapeTargetDown",
                        "ImageWorkerScrapeTargetMissing");
        assertThat(expression(rules, "ImageWorkerIntakePaused")).contains("image_worker_intake_paused");
        assertThat(expression(rules, "ImageWorkerSpendGuardHolding")).contains("image_worker_budget_held_requests");
        assertThat(expression(rules, "ImageWorkerDeadLetters")).contains("image_worker_dead_letters_total");
        assertThat(expression(rules, "ImageWorkerConsumerLagGrowing"))
                .contains("deriv(", "by (namespace, client_id)", "client_id=~\"kafka-consumer-(priority-)?requests");
        assertThat(expression(rules, "ImageWorkerConcurrencyLimitLowered"))
                .contains("image_worker_concurrency_limit", "image_worker_concurrency_max");
        assertThat(expression(rules, "ImageWorkerErrorRateHigh")).contains("by (namespace, code)");
        assertThat(expression(rules, "ImageWorkerCancelReaderStalled")).contains("image_worker_cancel_reader_stalled");
        assertThat(expression(rules, "ImageWorkerSideTopicRecordsSkipped"))
                .contains("image_worker_side_topic_records_skipped_total", "topic, reason");
        assertThat(expression(rules, "ImageWorkerCancelsDropped")).contains("image_worker_cancels_dropped_total");
        assertThat(expression(rules, "ImageWorkerProducerHeld"))
                .contains("image_worker_budget_producer_held_requests", "by (namespace, producer)");
    }

    /**
     * The states a platform engineer must hear of and that no other alert covered: commits of results in doubt,
     * transactions that keep failing, a parked backlog nothing reads back, a worker unready for long (Kafka or the
     * store out of reach), a target Prometheus cannot scrape or does not find. Each reads the series that tells it.
     */
    @Test
    void alertOnTransactionsTheParkedBacklogUnreadinessAndMissingTargets() {
        JsonNode rules = ObservabilityFiles.alerts();

        assertThat(expression(rules, "ImageWorkerTransactionsInDoubt"))
                .contains("image_worker_transactions_in_doubt_total", "settled");
        assertThat(expression(rules, "ImageWorkerTransactionsFailing"))
                .contains("image_worker_transactions_failed_total");
        assertThat(expression(rules, "ImageWorkerParkedBacklogStuck"))
                .contains(
                        "kafka_consumer_fetch_manager_records_consumed_total{client_id=~\"kafka-consumer-parked-requests",
                        "kafka_consumer_fetch_manager_records_lag_max{client_id=~\"kafka-consumer-parked-requests",
                        "image_worker_requests_parked_total");
        assertThat(expression(rules, "ImageWorkerPodUnready"))
                .contains("kube_pod_status_ready{condition=\"false\"}", "image_worker_intake_paused");
        assertThat(expression(rules, "ImageWorkerScrapeTargetDown")).contains("up{job=");
        assertThat(expression(rules, "ImageWorkerScrapeTargetMissing")).startsWith("absent(up{job=");
        // Besides the worker's own series, the rules read only Prometheus' up and kube-state-metrics' pod readiness.
        Set<String> external = new TreeSet<>();
        ObservabilityFiles.queries().forEach(query -> external.addAll(ObservabilityFiles.externalMetrics(query)));
        assertThat(external).containsExactlyInAnyOrder("up", "kube_pod_status_ready");
    }

    /** promtool's unit tests cover each of those alerts and the lag alert, each with a case where it fires. */
    @Test
    void theAlertsHaveRuleTestsThatSeeThemFire() {
        JsonNode tests = ObservabilityFiles.alertTests();
        Set<String> firing = new TreeSet<>();
        tests.path("tests").forEach(test -> test.path("alert_rule_test").forEach(check -> {
            if (!check.path("exp_alerts").isEmpty()) {
                firing.add(check.path("alertname").asText());
            }
        }));

        assertThat(tests.path("rule_files").get(0).asText())
                .isEqualTo(ObservabilityFiles.ALERTS.getFileName().toString());
        assertThat(firing)
                .contains(
                        "ImageWorkerConsumerLagGrowing",
                        "ImageWorkerParkedBacklogStuck",
                        "ImageWorkerTransactionsInDoubt",
                        "ImageWorkerTransactionsFailing",
                        "ImageWorkerPodUnready",
                        "ImageWorkerScrapeTargetDown",
                        "ImageWorkerScrapeTargetMissing");
        Set<String> alerts = new TreeSet<>();
        ObservabilityFiles.alerts().path("groups").forEach(g -> g.path("rules")
                .forEach(r -> alerts.add(r.path("alert").asText())));
        assertThat(alerts).containsAll(firing);
    }

    /**
     * The rule tests pass in promtool (Debian's prometheus package has it; {@code .ci/run} installs it). Skipped, saying
     * so, on a machine without it, unless {@code IMAGE_WORKER_REQUIRE_TEST_TOOLS=true} (CI sets it): there a missing
     * promtool fails.
     */
    @Test
    void theRuleTestsPassInPromtool() throws Exception {
        Optional<Path> promtool = Stream.of(
                        System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .map(dir -> Path.of(dir, "promtool"))
                .filter(Files::isExecutable)
                .findFirst();
        if (Boolean.parseBoolean(System.getenv("IMAGE_WORKER_REQUIRE_TEST_TOOLS"))) {
            assertThat(promtool)
                    .as("promtool is required here (IMAGE_WORKER_REQUIRE_TEST_TOOLS) and not on the PATH")
                    .isPresent();
        }
        Assumptions.assumeTrue(
                promtool.isPresent(),
                "promtool is not installed (Debian: apt-get install prometheus): rule tests skipped");

        Process process = new ProcessBuilder(
                        promtool.get().toString(),
                        "test",
                        "rules",
                        ObservabilityFiles.ALERT_TESTS.getFileName().toString())
                .directory(ObservabilityFiles.DIRECTORY.toFile())
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        assertThat(output).contains("SUCCESS");
    }

    private static String expression(JsonNode rules, String alert) {
        List<String> found = new ArrayList<>();
        rules.path("groups").forEach(g -> g.path("rules").forEach(r -> {
            if (r.path("alert").asText().equals(alert)) {
                found.add(r.path("expr").asText());
            }
        }));
        assertThat(found).hasSize(1);
        return found.get(0);
    }

    @Test
    void everyQueryReadsAMetricAndItsParenthesesClose() {
        ObservabilityFiles.metricsByQuery().forEach((query, metrics) -> {
            Set<String> read = new TreeSet<>(metrics);
            read.addAll(ObservabilityFiles.externalMetrics(query));
            assertThat(read).as(query).isNotEmpty();
            int depth = 0;
            for (char c : query.toCharArray()) {
                depth += c == '(' ? 1 : c == ')' ? -1 : 0;
                assertThat(depth).as(query).isNotNegative();
            }
            assertThat(depth).as(query).isZero();
        });
    }

    @Test
    void theMetricsOnceOnNoPanelAreDrawn() {
        // MetricsExportTest checks every series a worker exports against the panels; these were once on none.
        assertThat(ObservabilityFiles.panelMetrics())
                .contains(
                        "image_worker_budget_used_calls",
                        "image_worker_budget_max_calls",
                        "image_worker_budget_reader_stalled",
                        "image_worker_budget_reader_restarts_total",
                        "image_worker_requests_in_progress",
                        "image_worker_cpu_tasks_waiting",
                        "image_worker_gateway_priority_calls_waiting",
                        "image_worker_gateway_stale_connection_retries_total",
                        "image_worker_memory_held_peak_bytes");
    }

    @Test
    void theCapIsDrawnOnThePanelOfTheCallsUsed() {
        List<Set<String>> panels = new ArrayList<>();
        ObservabilityFiles.dashboard().path("panels").forEach(panel -> {
            Set<String> metrics = new TreeSet<>();
            panel.path("targets")
                    .forEach(t -> metrics.addAll(
                            ObservabilityFiles.metrics(t.path("expr").asText())));
            panels.add(metrics);
        });

        assertThat(panels)
                .anySatisfy(metrics -> assertThat(metrics).contains(BudgetGuard.USED_CALLS, BudgetGuard.MAX_CALLS));
    }

    @Test
    void aFleetWideGaugeIsNeverSummedOverThePods() {
        // Every pod reports the fleet's value: a sum over N pods reads N times too high.
        assertThat(BudgetGuard.FLEET_WIDE_GAUGES).contains("image_worker_budget_used_calls");
        for (String query : ObservabilityFiles.queries()) {
            for (String summed : ObservabilityFiles.aggregated("sum", query)) {
                assertThat(ObservabilityFiles.metrics(summed))
                        .as("summed in %s", query)
                        .doesNotContainAnyElementsOf(BudgetGuard.FLEET_WIDE_GAUGES);
            }
        }
        Set<String> maxed = new TreeSet<>();
        ObservabilityFiles.panelQueries().forEach(query -> ObservabilityFiles.aggregated("max", query)
                .forEach(inner -> maxed.addAll(ObservabilityFiles.metrics(inner))));
        assertThat(maxed)
                .as("each fleet-wide gauge is drawn, as its max over the pods")
                .containsAll(BudgetGuard.FLEET_WIDE_GAUGES);
    }

    @Test
    void theAggregationCheckFindsWhatEachFormAggregates() {
        assertThat(ObservabilityFiles.aggregated("sum", "sum(a{n=\"x\"}) / sum by (pod) (rate(b[5m]))"))
                .containsExactly("a{n=\"x\"}", "rate(b[5m])");
        assertThat(ObservabilityFiles.aggregated("sum", "sum without (pod)(c) + sum_over_time(d[1h]) + max(e)"))
                .containsExactly("c");
        assertThat(ObservabilityFiles.aggregated("max", "max by (namespace) (f) / max(g) + max_over_time(h[5m])"))
                .containsExactly("f", "g");
    }

    @Test
    void theDashboardIsAGrafanaDashboardWithAPrometheusDatasourceVariable() {
        JsonNode dashboard = ObservabilityFiles.dashboard();

        assertThat(dashboard.path("uid").asText()).isEqualTo("image-worker");
        assertThat(dashboard.path("schemaVersion").asInt()).isPositive();
        assertThat(dashboard.path("templating").path("list").get(0).path("type").asText())
                .isEqualTo("datasource");
        Set<Integer> ids = new TreeSet<>();
        dashboard.path("panels").forEach(panel -> {
            assertThat(ids.add(panel.path("id").asInt())).as("unique panel id").isTrue();
            assertThat(panel.path("title").asText()).isNotBlank();
            assertThat(panel.path("gridPos").path("w").asInt()).isBetween(1, 24);
            if (panel.path("type").asText().equals("row")) {
                // A row only groups the panels below it (repeated by a variable): it queries nothing itself.
                assertThat(panel.path("targets")).isEmpty();
                return;
            }
            assertThat(panel.path("datasource").path("uid").asText()).isEqualTo("${datasource}");
            assertThat(panel.path("targets")).isNotEmpty();
        });
    }

    @Test
    void eachCappedProducerHasARowOfItsBudgetRepeatedByItsVariable() {
        JsonNode dashboard = ObservabilityFiles.dashboard();
        List<String> variables = new ArrayList<>();
        dashboard
                .path("templating")
                .path("list")
                .forEach(variable -> variables.add(variable.path("name").asText()));
        List<JsonNode> rows = new ArrayList<>();
        dashboard.path("panels").forEach(panel -> {
            if (panel.path("type").asText().equals("row")) {
                rows.add(panel);
            }
        });

        assertThat(variables).contains("producer");
        assertThat(rows)
                .anySatisfy(row -> assertThat(row.path("repeat").asText()).isEqualTo("producer"));
        assertThat(ObservabilityFiles.panelMetrics())
                .contains(
                        "image_worker_budget_producer_used_calls",
                        "image_worker_budget_producer_max_calls",
                        "image_worker_budget_producer_held_requests");
        assertThat(ObservabilityFiles.panelQueries())
                .filteredOn(query -> query.contains("image_worker_budget_producer_"))
                .allSatisfy(query -> assertThat(query).contains("producer=~\"$producer\""));
    }
}
