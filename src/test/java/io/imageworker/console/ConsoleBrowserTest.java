package io.imageworker.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.testing.KafkaTestClient;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.infra.Infrastructure;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;

/**
 * The console in a real browser (a headless Chromium driven by Selenium), served by a worker on the real broker, store
 * and gateway simulator, with a token and both actions on: the pages and the API refused without the token, a prompt
 * sent from the page whose thumbnail loads (decoded, not only present) and whose detail gives the stored image's
 * sha256, a failure's detail with the gateway's answer, a queued request seen in the replica's queue and cancelled
 * from the page, ending {@code CANCELLED} with no call, the filter by producer,
 * and 10,000 requests in view with a bounded DOM. It writes the screenshot of the README ({@code
 * target/console.png}). One Quarkus start, some seconds of browser work.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(ConsoleBrowserTest.WithConsole.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserTest {

    static final String TOKEN = "console-test-" + UUID.randomUUID();
    static final String CANCELS = "image-cancel-console";
    static final Duration WITHIN = Duration.ofSeconds(30);
    static final ObjectMapper JSON = new ObjectMapper();

    /** The tests' servers and settings, with the console on, behind {@link #TOKEN}, and cancellation on. */
    public static class WithConsole extends WorkerTestResource {
        @Override
        public Map<String, String> start() {
            Map<String, String> config = super.start();
            Infrastructure.get().kafka().createTopics(CANCELS);
            config.put("image-worker.topic.cancel", CANCELS);
            config.put("image-worker.console.enabled", "true");
            config.put("image-worker.console.token", TOKEN);
            config.put("image-worker.console.actions", "cancel,submit");
            // Held calls keep their slots for as long as the cancel test needs: a call times out only after this.
            config.put("image-worker.gateway.timeout", "60s");
            return config;
        }
    }

    static KafkaTestClient kafka;
    static ChromeDriver browser;

    final GatewaySimulator gateway = WorkerTestResource.simulator();
    final HttpClient http = HttpClient.newHttpClient();

    @TestHTTPResource("/console")
    URI console;

    @Inject
    ConsoleRoutes routes;

    @BeforeAll
    static void start() {
        kafka = KafkaTestClient.forDefaultTopics();
        Optional<Chromium.Found> found = Chromium.find();
        if (found.isEmpty()) {
            System.out.println("ConsoleBrowserTest: " + Chromium.missing());
            if (Chromium.required()) {
                Assertions.fail(Chromium.missing());
            }
            Assumptions.abort(Chromium.missing());
        }
        browser = Chromium.start(found.get(), 1500, 900);
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.quit();
        }
        kafka.close();
    }

    @Test
    @Order(1)
    void thePagesAndTheApiAreRefusedWithoutTheToken() throws Exception {
        assertThat(get("/console", null).statusCode()).isEqualTo(401);
        assertThat(get("/console", null).body()).contains("name=\"token\"").doesNotContain(TOKEN);
        assertThat(get("/console/api/requests", null).statusCode()).isEqualTo(401);
        assertThat(get("/console/api/queue", null).statusCode()).isEqualTo(401);
        assertThat(get("/console/api/events", null).statusCode()).isEqualTo(401);
        assertThat(get("/console/api/requests", "not-" + TOKEN).statusCode()).isEqualTo(401);
        HttpResponse<String> cancel = http.send(
                HttpRequest.newBuilder(URI.create(console + "/api/requests/some-id/cancel"))
                        .header("X-Console-Action", "1")
                        .POST(HttpRequest.BodyPublishers.ofString("{}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(cancel.statusCode()).isEqualTo(401);
        assertThat(get("/console/api/requests", TOKEN).statusCode()).isEqualTo(200);

        // The browser: the token form, a wrong token refused, the right one admits (a cookie, no token in the URL).
        browser.get(console.toString());
        browser.findElement(By.id("token")).sendKeys("wrong");
        browser.findElement(By.id("enter")).click();
        await().atMost(WITHIN).until(() -> !browser.findElements(By.id("token")).isEmpty());
        assertThat(browser.findElements(By.id("rows"))).isEmpty();
        browser.findElement(By.id("token")).sendKeys(TOKEN);
        browser.findElement(By.id("enter")).click();
        await().atMost(WITHIN).until(() -> !browser.findElements(By.id("rows")).isEmpty());
        assertThat(browser.getCurrentUrl()).doesNotContain(TOKEN);
        await().atMost(WITHIN).until(() -> "live".equals(text(By.id("live"))));
    }

    @Test
    @Order(2)
    void aPromptSentFromThePageShowsItsThumbnailAndItsDetail() {
        String id = submit("a red bicycle on a white background", "console-a", "1024x1024");

        JsonNode event = body(kafka.awaitResult(id, WITHIN));
        assertThat(event.path("image").isObject()).as(event.toString()).isTrue();
        By row = By.cssSelector("#rows tr[data-id='" + id + "'][data-state='completed']");
        await().atMost(WITHIN).until(() -> !browser.findElements(row).isEmpty());
        await().atMost(WITHIN)
                .until(() -> Boolean.TRUE.equals(((JavascriptExecutor) browser)
                        .executeScript(
                                "const img = document.querySelector(arguments[0]);"
                                        + " return img !== null && img.complete && img.naturalWidth > 0;",
                                "#rows tr[data-id='" + id + "'] img.thumb")));

        browser.findElement(row).click();
        await().atMost(WITHIN).until(() -> text(By.id("detail"))
                .contains(event.path("image").path("sha256").asText()));
        String detail = text(By.id("detail"));
        assertThat(detail).contains("1024x1024").contains("console-a");
        assertThat(browser.getPageSource()).doesNotContain("X-Amz-").doesNotContain("s3://");
    }

    @Test
    @Order(3)
    void aFailuresDetailGivesTheGatewaysAnswer() {
        // The simulator refuses a prompt with its moderation trigger: 400, a billed refusal with a body.
        String id = submit("a poster " + SimulatorSettings.DEFAULT_MODERATION_TRIGGER, "console-a", "");

        JsonNode event = body(kafka.awaitResult(id, WITHIN));
        assertThat(event.path("error").path("code").asText()).isEqualTo("REJECTED");
        By row = By.cssSelector("#rows tr[data-id='" + id + "'][data-state='failed']");
        await().atMost(WITHIN).until(() -> !browser.findElements(row).isEmpty());
        browser.findElement(row).click();
        await().atMost(WITHIN).until(() -> text(By.id("gateway-body")).contains("moderation_blocked"));
        assertThat(text(By.id("detail"))).contains("REJECTED").contains("400");
    }

    @Test
    @Order(4)
    void aQueuedRequestCancelledFromThePageEndsCancelledWithNoCall() throws Exception {
        // The four slots taken by calls the simulator holds: the next request waits for a slot.
        gateway.control().holdImageCallsAfter(0);
        try {
            for (int i = 0; i < 4; i++) {
                String filler = "console-filler-" + UUID.randomUUID().toString().substring(0, 8);
                kafka.send(
                        WorkerTestResource.REQUESTS,
                        "{\"requestId\":\"" + filler + "\",\"prompt\":\"held " + filler
                                + "\",\"producer\":\"filler\"}");
            }
            await().atMost(WITHIN).until(() -> gateway.imageCallsInFlight() == 4);

            String marker = "queued-" + UUID.randomUUID();
            String id = submit("a blue teapot, " + marker, "console-b", "");
            // The queue of this replica has it, in producer console-b's line, behind none of its own.
            await().atMost(WITHIN)
                    .until(() -> !browser.findElements(By.cssSelector("#queued tr[data-queued='" + id + "']"))
                            .isEmpty());
            JsonNode queue = JSON.readTree(get("/console/api/queue", TOKEN).body());
            assertThat(queue.path("queued").toString()).contains(id);
            assertThat(queue.path("lines").toString()).contains("\"producer\":\"console-b\",\"waiting\":1");
            assertThat(queue.path("calling")).hasSize(4);
            By queuedRow = By.cssSelector("#rows tr[data-id='" + id + "'] button.cancel");
            await().atMost(WITHIN).until(() -> !browser.findElements(queuedRow).isEmpty());
            browser.findElement(queuedRow).click();

            By cancelled = By.cssSelector("#rows tr[data-id='" + id + "'][data-state='cancelled']");
            await().atMost(WITHIN).until(() -> !browser.findElements(cancelled).isEmpty());
            JsonNode event = body(kafka.awaitResult(id, WITHIN));
            assertThat(event.path("error").path("code").asText()).isEqualTo("CANCELLED");
            assertThat(event.path("billing").path("calls").asInt()).isZero();
            assertThat(callsWith(marker)).isEmpty();
        } finally {
            gateway.reset();
        }
    }

    @Test
    @Order(5)
    void theFilterByProducerShowsOnlyThatProducersRequests() throws IOException {
        By producers = By.cssSelector("#filter-producer option[value='console-b']");
        await().atMost(WITHIN).until(() -> !browser.findElements(producers).isEmpty());
        choose("filter-producer", "console-a");

        await().atMost(WITHIN).until(() -> browser.findElements(By.cssSelector("#rows tr.row")).stream()
                .allMatch(row -> "console-a"
                        .equals(row.findElement(By.cssSelector("td.producer")).getText())));
        List<WebElement> rows = browser.findElements(By.cssSelector("#rows tr.row"));
        assertThat(rows).isNotEmpty();
        assertThat(browser.findElements(By.cssSelector("#rows tr[data-state='cancelled']")))
                .isEmpty();

        choose("filter-producer", "");
        await().atMost(WITHIN).until(() -> !browser.findElements(By.cssSelector("#rows tr[data-state='cancelled']"))
                .isEmpty());
        screenshot();
    }

    @Test
    @Order(6)
    void tenThousandRequestsInViewKeepTheDomSmall() {
        ConsoleFeed feed = routes.feed();
        for (int i = 0; i < 10_000; i++) {
            feed.apply(ConsoleFeedTest.completed("bulk-" + i, "bulk", 1));
        }
        await().atMost(WITHIN).until(() -> text(By.id("shown")).contains("of 10000"));
        int rows = browser.findElements(By.cssSelector("#rows tr.row")).size();
        assertThat(rows).isBetween(1, 100);

        ((JavascriptExecutor) browser)
                .executeScript("const t = document.getElementById('table'); t.scrollTop = t.scrollHeight;");
        await().atMost(WITHIN)
                .until(() -> !browser.findElements(By.cssSelector("#rows tr.row"))
                                .isEmpty()
                        && browser.findElements(By.cssSelector("#rows tr.row")).size() <= 100);
    }

    private String submit(String prompt, String producer, String size) {
        browser.findElement(By.id("prompt")).clear();
        browser.findElement(By.id("prompt")).sendKeys(prompt);
        browser.findElement(By.id("producer")).clear();
        browser.findElement(By.id("producer")).sendKeys(producer);
        choose("size", size);
        String before = browser.findElement(By.id("sent")).getAttribute("data-request-id");
        browser.findElement(By.id("send")).click();
        await().atMost(WITHIN).until(() -> {
            String now = browser.findElement(By.id("sent")).getAttribute("data-request-id");
            return now != null && !now.equals(before);
        });
        return browser.findElement(By.id("sent")).getAttribute("data-request-id");
    }

    /** Picks the option of value {@code value} in the select {@code id}, as a user does. */
    private void choose(String id, String value) {
        browser.findElement(By.cssSelector("#" + id + " option[value='" + value + "']"))
                .click();
    }

    /** The image calls whose prompt holds {@code marker}. */
    private List<RecordedCall> callsWith(String marker) {
        return gateway.imageCalls().stream()
                .filter(call -> String.valueOf(call.textFields().get("prompt")).contains(marker))
                .toList();
    }

    private String text(By element) {
        List<WebElement> found = browser.findElements(element);
        return found.isEmpty() ? "" : found.get(0).getText();
    }

    private HttpResponse<String> get(String path, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(console.resolve(path));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode body(org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]> record) {
        try {
            return JSON.readTree(record.value());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The README's screenshot: target/console.png (copied to docs/images/console.png to refresh it). */
    private void screenshot() throws IOException {
        Path file = BuildPaths.buildDir().resolve("console.png");
        Files.write(file, browser.getScreenshotAs(OutputType.BYTES));
        System.out.println("ConsoleBrowserTest: screenshot " + file);
    }
}
