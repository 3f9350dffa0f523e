package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.testing.KafkaTestClient;
import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.SharedServersFirst;
import io.imageworker.testing.launch.TakesAbout;
import io.imageworker.testing.launch.WorkerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;

/**
 * The console in a real browser (a headless Chromium driven by Selenium), served by the packaged worker, started once
 * as a child process on the shared broker and store with topics and a consumer group of its own and a gateway
 * simulator of its own, the console on behind a token with both actions ({@code IMAGE_WORKER_CONSOLE_*}, as a
 * deployment sets them): the pages and the API refused without the token, a prompt sent from the page whose thumbnail
 * loads (decoded, not only present) and whose detail gives the stored image's sha256, a failure's detail with the
 * gateway's answer, a queued request seen in the replica's queue and cancelled from the page, ending {@code
 * CANCELLED} with no call (the simulator holds the four calls before it), the filter by producer, and 10,000 requests
 * in view with a bounded DOM (published to the completed topic the console reads). It writes the screenshot of the
 * README ({@code target/console.png}). Everything is done from outside the worker: its HTTP port, its topics, the
 * simulator's controls.
 */
@ExtendWith(SharedServersFirst.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@TakesAbout(seconds = 61)
class ConsoleBrowserIT {

    static final String TOKEN = "console-test-" + UUID.randomUUID();
    static final Duration WITHIN = Duration.ofSeconds(30);
    static final ObjectMapper JSON = new ObjectMapper();
    static final int CONCURRENCY = 4;

    static LaunchStack stack;
    static WorkerProcess worker;
    static KafkaTestClient kafka;
    static ChromeDriver browser;
    static URI console;

    final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        // The browser first: where there is none, no worker is started for nothing.
        Optional<Chromium.Found> found = Chromium.find();
        if (found.isEmpty()) {
            System.out.println("ConsoleBrowserIT: " + Chromium.missing());
            if (Chromium.required()) {
                Assertions.fail(Chromium.missing());
            }
            Assumptions.abort(Chromium.missing());
        }
        browser = Chromium.start(found.get(), 1500, 900);

        stack = LaunchStack.onSharedServers(
                SimulatorSettings.defaults().withLatency(Latency.fixed(Duration.ofMillis(50))));
        LaunchStack.Topics topics = stack.topics();
        String status = besideRequests("image-status");
        String cancels = besideRequests("image-cancel");
        stack.infrastructure().kafka().createTopics(status, cancels);
        kafka = new KafkaTestClient(
                stack.infrastructure().kafkaBootstrapServers(),
                List.of(topics.completed(), topics.failed(), topics.dlq(), status));
        worker = stack.worker("console-browser-worker", CONCURRENCY)
                .env(Map.of(
                        "IMAGE_WORKER_TOPIC_STATUS",
                        status,
                        "IMAGE_WORKER_TOPIC_CANCEL",
                        cancels,
                        "IMAGE_WORKER_CONSOLE_ENABLED",
                        "true",
                        "IMAGE_WORKER_CONSOLE_TOKEN",
                        TOKEN,
                        "IMAGE_WORKER_CONSOLE_ACTIONS",
                        "cancel,submit",
                        // Held calls keep their slots for as long as the cancel test needs: a call times out only
                        // after this.
                        "IMAGE_WORKER_GATEWAY_TIMEOUT",
                        "60s"))
                .smallJvm()
                .build()
                .start();
        console = URI.create("http://" + WorkerProcess.HOST + ":" + worker.port() + "/console");
    }

    /** A topic of this test's stack, named beside its request topic ({@code launch-<id>-image-status}). */
    private static String besideRequests(String name) {
        String request = stack.topics().request();
        return request.substring(0, request.length() - "image-request".length()) + name;
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (worker != null) {
            worker.close();
        }
        if (kafka != null) {
            kafka.close();
        }
        if (stack != null) {
            stack.close();
        }
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
        GatewaySimulator gateway = stack.gateway();
        // The four slots taken by calls the simulator holds: the next request waits for a slot.
        gateway.control().holdImageCallsAfter(0);
        try {
            for (int i = 0; i < CONCURRENCY; i++) {
                String filler = "console-filler-" + UUID.randomUUID().toString().substring(0, 8);
                kafka.send(
                        stack.topics().request(),
                        "{\"requestId\":\"" + filler + "\",\"prompt\":\"held " + filler
                                + "\",\"producer\":\"filler\"}");
            }
            await().atMost(WITHIN).until(() -> gateway.imageCallsInFlight() == CONCURRENCY);

            String marker = "queued-" + UUID.randomUUID();
            String id = submit("a blue teapot, " + marker, "console-b", "");
            // The queue of this replica has it, in producer console-b's line, behind none of its own.
            await().atMost(WITHIN)
                    .until(() -> !browser.findElements(By.cssSelector("#queued tr[data-queued='" + id + "']"))
                            .isEmpty());
            JsonNode queue = JSON.readTree(get("/console/api/queue", TOKEN).body());
            assertThat(queue.path("queued").toString()).contains(id);
            assertThat(queue.path("lines").toString()).contains("\"producer\":\"console-b\",\"waiting\":1");
            assertThat(queue.path("calling")).hasSize(CONCURRENCY);
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
        // The worker's events so far kept the contract (checked at the close); the bulk below is the test's own.
        kafka.close();
        kafka = null;
        // 10,000 completed events on the topic the console reads, as another replica of the fleet would publish them
        // (the fields the console reads; not the contract's headers, which are not what this checks).
        publishCompleted(10_000);
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

    /** Publishes {@code count} completed events of producer {@code bulk} to the stack's completed topic, at once. */
    private static void publishCompleted(int count) {
        List<Future<RecordMetadata>> sent = new ArrayList<>(count);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        stack.infrastructure().kafkaBootstrapServers(),
                        ProducerConfig.ACKS_CONFIG,
                        "all",
                        ProducerConfig.LINGER_MS_CONFIG,
                        20),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < count; i++) {
                String id = "bulk-" + i;
                sent.add(producer.send(new ProducerRecord<>(
                        stack.topics().completed(),
                        id.getBytes(StandardCharsets.UTF_8),
                        completed(id).getBytes(StandardCharsets.UTF_8))));
            }
            producer.flush();
            for (Future<RecordMetadata> acknowledgement : sent) {
                acknowledgement.get(30, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            throw new IllegalStateException("could not publish the bulk of completed events", e);
        }
    }

    /** A completed event of one image (not in the store: its thumbnail does not load, as a deleted image's). */
    private static String completed(String requestId) {
        return "{\"requestId\":\"" + requestId + "\",\"operation\":\"generate\",\"producer\":\"bulk\","
                + "\"attempts\":1,\"billing\":{\"calls\":1,\"billed\":1,\"unknown\":0},"
                + "\"size\":{\"requested\":\"16:9\",\"sent\":\"1536x864\",\"actual\":\"1536x864\",\"matched\":true},"
                + "\"timings\":{\"receivedAt\":\"2026-01-05T10:15:20.511Z\",\"startedAt\":\"2026-01-05T10:15:20.530Z\","
                + "\"completedAt\":\"2026-01-05T10:15:42.118Z\",\"gatewayMs\":21345,\"storeMs\":83},"
                + "\"metadata\":{},\"image\":{\"bucket\":\"" + LaunchStack.BUCKET + "\",\"key\":\"images/" + requestId
                + ".png\",\"contentType\":\"image/png\",\"width\":1536,\"height\":864,\"bytes\":1834211,"
                + "\"sha256\":\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"}}";
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
        return stack.gateway().imageCalls().stream()
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

    private static JsonNode body(ConsumerRecord<byte[], byte[]> record) {
        try {
            return JSON.readTree(record.value());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The README's screenshot: target/console.png (copied to docs/images/console.png to refresh it). */
    private void screenshot() throws IOException {
        Path file = BuildPaths.buildDir().resolve("console.png");
        Files.write(file, browser.getScreenshotAs(OutputType.BYTES));
        System.out.println("ConsoleBrowserIT: screenshot " + file);
    }
}
