package io.imageworker.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.health.SettingsCheck;
import io.imageworker.testing.WorkerTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The console off, as the worker ships (the pipeline tests' own worker, no start of its own): none of its routes
 * answers, none of its pages is served as a static file, and none of its work runs (no reader thread, no feed); its
 * settings are checked at start-up all the same.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class ConsoleOffTest {

    @TestHTTPResource("/")
    URI root;

    @Inject
    ConsoleRoutes routes;

    @Inject
    Instance<SettingsCheck> checksAboveTheStartupCheck;

    @Test
    void offItServesNothingAndRunsNothing() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        for (String path : List.of(
                "console",
                "console/",
                "console/console.js",
                "console/index.html",
                "console/api/requests",
                "console/api/queue",
                "console/api/events",
                "index.html")) {
            HttpResponse<String> answer =
                    http.send(HttpRequest.newBuilder(root.resolve(path)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as(path).isEqualTo(404);
        }
        assertThat(routes.feed()).isNull();
        assertThat(Thread.getAllStackTraces().keySet())
                .extracting(Thread::getName)
                .noneMatch(name -> name.startsWith("image-worker-console"));
    }

    /** The start-up check adds the problems of the console's settings to its own ({@code ConsoleSettingsCheckTest}). */
    @Test
    void offItsSettingsAreCheckedAtStartAllTheSame() {
        assertThat(checksAboveTheStartupCheck.stream())
                .hasAtLeastOneElementOfType(ConsoleSettingsCheck.class)
                .allSatisfy(check -> assertThat(check.problems()).isEmpty());
    }
}
