package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.ObservabilityFiles;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.Fault;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Every metric the Grafana dashboard and the alert rules under deploy/observability/ read is one the worker really
 * exports: a worker on the real broker and store runs a completed request (and its replay), a failed one and a DLQ
 * record, then its
 * /q/metrics is scraped and its series names compared (histograms as _bucket/_sum/_count, counters as _total). And
 * every series of the worker's own that it exports is drawn on some panel of the dashboard.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class MetricsExportTest extends PipelineTestSupport {

    @TestHTTPResource("/q/metrics")
    URI metrics;

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void everyMetricTheDashboardAndTheAlertsReadIsExported() throws Exception {
        String completed = newId("metrics-ok");
        String failed = newId("metrics-fail");
        send(request(completed, ""));
        result(completed);
        send(request(completed, ""));
        await().atMost(WITHIN).until(() -> kafka.results(completed).size() == 2);
        gateway.control().injectFault(Fault.moderationRefusal());
        send(request(failed, ""));
        result(failed);
        int deadLetters = kafka.deadLetters().size();
        send("not a request");
        await().atMost(WITHIN).until(() -> kafka.deadLetters().size() > deadLetters);

        // The Kafka client's metrics are read from the client: they may trail the first fetch by a scrape.
        await().atMost(WITHIN).untilAsserted(() -> {
            Set<String> exported = scrape();
            ObservabilityFiles.metricsByQuery().forEach((query, names) -> assertThat(exported)
                    .as(query)
                    .containsAll(names.stream()
                            .filter(name -> !ObservabilityFiles.CONSOLE_ONLY.contains(name))
                            .toList()));
        });
        Set<String> exported = scrape();
        assertThat(exported)
                .contains(
                        "image_worker_intake_paused",
                        "image_worker_budget_held_requests",
                        "image_worker_budget_max_calls",
                        "image_worker_requests_total",
                        "image_worker_dead_letters_total");

        // And the other way round: every series of the worker's own is drawn on some panel (a histogram or timer
        // once for all its series: _bucket, _sum, _count, _max).
        Set<String> drawn = new TreeSet<>();
        ObservabilityFiles.panelMetrics().forEach(name -> drawn.add(meter(name)));
        assertThat(exported.stream()
                        .filter(name -> name.startsWith("image_worker_"))
                        .filter(name -> !drawn.contains(meter(name))))
                .as("exported but on no panel of the dashboard")
                .isEmpty();
    }

    /** The meter a series belongs to: its name without the suffix of a histogram's or a timer's series. */
    private static String meter(String series) {
        return series.replaceFirst("_(bucket|sum|count|max)$", "");
    }

    /** The series names of one scrape, as Prometheus stores them. */
    private Set<String> scrape() throws Exception {
        String body = http.send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString())
                .body();
        Set<String> names = new TreeSet<>();
        body.lines()
                .filter(line -> !line.isBlank() && !line.startsWith("#"))
                .forEach(line -> names.add(line.split("[{ ]", 2)[0]));
        return names;
    }
}
