package io.imageworker.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The Grafana dashboard and the Prometheus alert rules under {@code deploy/observability/}, and the queries in them. */
public final class ObservabilityFiles {

    public static final Path DIRECTORY = Path.of("deploy", "observability");
    public static final Path DASHBOARD = DIRECTORY.resolve("image-worker-dashboard.json");
    public static final Path ALERTS = DIRECTORY.resolve("image-worker-alerts.yaml");

    /** A series name the worker exports: its own metrics and the Kafka client's (Micrometer's names, in Prometheus form). */
    private static final Pattern METRIC = Pattern.compile("\\b((?:image_worker|kafka)_[a-z0-9_]+)\\b");

    /**
     * A series the alert rules read from elsewhere than the worker, always with a label selector: Prometheus' own {@code
     * up} and kube-state-metrics' {@code kube_*}.
     */
    private static final Pattern EXTERNAL = Pattern.compile("\\b(up|kube_[a-z0-9_]+)\\s*\\{");

    /**
     * The series the worker exports only with its console on ({@code IMAGE_WORKER_CONSOLE_ENABLED}), which the dashboard
     * draws too: a worker without the console has no console reader to count. {@code ConsoleReaderBrokerTest} checks
     * that the reader registers them.
     */
    public static final Set<String> CONSOLE_ONLY = Set.of("image_worker_console_reader_restarts_total");

    /** promtool's unit tests of the alert rules. */
    public static final Path ALERT_TESTS = DIRECTORY.resolve("image-worker-alerts.test.yaml");

    private ObservabilityFiles() {}

    public static JsonNode dashboard() {
        try {
            return new ObjectMapper().readTree(DASHBOARD.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static JsonNode alerts() {
        try {
            return new YAMLMapper().readTree(ALERTS.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every PromQL query of the dashboard (panel targets, template variables) and of the alert rules. */
    public static List<String> queries() {
        List<String> queries = new ArrayList<>(panelQueries());
        dashboard().path("templating").path("list").forEach(variable -> {
            if (variable.path("type").asText().equals("query")) {
                queries.add(variable.path("definition").asText());
            }
        });
        alerts().path("groups").forEach(group -> group.path("rules")
                .forEach(rule -> queries.add(rule.path("expr").asText())));
        return queries;
    }

    /** The PromQL queries of the dashboard's panels: what is drawn. */
    public static List<String> panelQueries() {
        List<String> queries = new ArrayList<>();
        dashboard().path("panels").forEach(panel -> panel.path("targets")
                .forEach(t -> queries.add(t.path("expr").asText())));
        return queries;
    }

    /** The series names each query reads. */
    public static Map<String, Set<String>> metricsByQuery() {
        Map<String, Set<String>> metrics = new LinkedHashMap<>();
        for (String query : queries()) {
            metrics.put(query, metrics(query));
        }
        return metrics;
    }

    /** The series names the dashboard's panels read. */
    public static Set<String> panelMetrics() {
        Set<String> names = new TreeSet<>();
        panelQueries().forEach(query -> names.addAll(metrics(query)));
        return names;
    }

    /** The series names one query reads. */
    public static Set<String> metrics(String query) {
        Set<String> names = new TreeSet<>();
        Matcher matcher = METRIC.matcher(query);
        while (matcher.find()) {
            names.add(matcher.group(1));
        }
        return names;
    }

    /** The series one query reads that the worker does not export ({@link #EXTERNAL}). */
    public static Set<String> externalMetrics(String query) {
        Set<String> names = new TreeSet<>();
        Matcher matcher = EXTERNAL.matcher(query);
        while (matcher.find()) {
            names.add(matcher.group(1));
        }
        return names;
    }

    /** promtool's unit tests of the alert rules ({@link #ALERT_TESTS}). */
    public static JsonNode alertTests() {
        try {
            return new YAMLMapper().readTree(ALERT_TESTS.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The text each aggregation {@code operator} (sum, max...) of a query aggregates: what is between the parentheses of
     * {@code sum (...)}, {@code sum by (labels) (...)} or {@code sum without (labels) (...)}; not {@code sum_over_time},
     * which adds up one series over time.
     */
    public static List<String> aggregated(String operator, String query) {
        List<String> found = new ArrayList<>();
        Matcher matcher = Pattern.compile("\\b" + operator + "\\s*(?:(?:by|without)\\s*\\([^)]*\\)\\s*)?\\(")
                .matcher(query);
        while (matcher.find()) {
            int open = matcher.end() - 1;
            int depth = 0;
            for (int i = open; i < query.length(); i++) {
                char c = query.charAt(i);
                depth += c == '(' ? 1 : c == ')' ? -1 : 0;
                if (depth == 0) {
                    found.add(query.substring(open + 1, i));
                    break;
                }
            }
        }
        return found;
    }
}
