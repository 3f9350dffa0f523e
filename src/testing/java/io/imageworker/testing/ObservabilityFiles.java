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
        List<String> queries = new ArrayList<>();
        dashboard().path("panels").forEach(panel -> panel.path("targets")
                .forEach(t -> queries.add(t.path("expr").asText())));
        dashboard().path("templating").path("list").forEach(variable -> {
            if (variable.path("type").asText().equals("query")) {
                queries.add(variable.path("definition").asText());
            }
        });
        alerts().path("groups").forEach(group -> group.path("rules")
                .forEach(rule -> queries.add(rule.path("expr").asText())));
        return queries;
    }

    /** The series names each query reads. */
    public static Map<String, Set<String>> metricsByQuery() {
        Map<String, Set<String>> metrics = new LinkedHashMap<>();
        for (String query : queries()) {
            Set<String> names = new TreeSet<>();
            Matcher matcher = METRIC.matcher(query);
            while (matcher.find()) {
                names.add(matcher.group(1));
            }
            metrics.put(query, names);
        }
        return metrics;
    }
}
