package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.testing.gateway.GatewaySimulator;
import io.imageworker.testing.gateway.SimulatorSettings;
import io.imageworker.testing.infra.BuildPaths;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.TakesAbout;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The packaged worker refuses to start, in one clear line, without its settings or with a wrong gateway address. */
@TakesAbout(seconds = 38)
class StartupCheckIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static GatewaySimulator gateway;

    @BeforeAll
    static void startGateway() {
        gateway = GatewaySimulator.start(SimulatorSettings.defaults());
    }

    @AfterAll
    static void stopGateway() {
        gateway.close();
    }

    private record Exit(int code, String output) {}

    /** Runs the packaged worker with only these settings (no Kafka is needed: it must stop before consuming). */
    private static Exit run(Map<String, String> env) throws IOException, InterruptedException {
        Process process = start(env);
        byte[] output = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Exit(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }

    /** Starts the packaged worker with only these settings, and a Kafka address where no broker answers. */
    private static Process start(Map<String, String> env) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(LaunchStack.QUICK_START);
        command.addAll(List.of("-jar", BuildPaths.workerJar().toString()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().keySet().removeIf(name -> name.startsWith("IMAGE_WORKER_") || name.startsWith("KAFKA_"));
        builder.environment().put("QUARKUS_HTTP_PORT", "0");
        builder.environment().put("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:1");
        builder.environment().putAll(env);
        return builder.start();
    }

    /**
     * Asked for JSON, every line of the refusal is one dated JSON object, and the one error names each missing or
     * contradictory setting. (Plain lines, dated, are the other tests' output.)
     */
    @Test
    void refusesToStartWithoutTheRequiredSettingsOrWithContradictoryOnesNamingEachInJsonLines() throws Exception {
        Exit exit = run(Map.of(
                "IMAGE_WORKER_GATEWAY_BASE_URL",
                gateway.baseUrl(),
                "IMAGE_WORKER_LOG_JSON",
                "true",
                "IMAGE_WORKER_PRIORITY_MIN_SHARE",
                "1.5",
                "IMAGE_WORKER_TOPIC_REQUEST_PRIORITY",
                "image-request",
                "IMAGE_WORKER_BUDGET_PER_PRODUCER",
                "catalogue=5000"));
        List<JsonNode> lines = new ArrayList<>();
        for (String line : exit.output().lines().toList()) {
            assertThat(line).as("a plain log line").doesNotMatch(DATED + ".*");
            if (line.startsWith("{")) {
                lines.add(JSON.readTree(line));
            }
        }

        assertThat(exit.code()).isEqualTo(1);
        assertThat(lines)
                .isNotEmpty()
                .allSatisfy(line -> assertThat(line.path("timestamp").asText()).matches(DATED + "$"));
        assertThat(lines.stream().filter(line -> line.path("message").asText().contains("image-worker cannot start")))
                .singleElement()
                .satisfies(line -> {
                    assertThat(line.path("level").asText()).isEqualTo("ERROR");
                    assertThat(line.path("message").asText())
                            .startsWith("image-worker cannot start")
                            .contains("IMAGE_WORKER_GATEWAY_API_KEY")
                            .contains("IMAGE_WORKER_GATEWAY_MODEL")
                            .contains("IMAGE_WORKER_PRIORITY_MIN_SHARE (1.5) must be from 0 to 1")
                            .contains("IMAGE_WORKER_TOPIC_REQUEST_PRIORITY must name another topic")
                            .contains("IMAGE_WORKER_BUDGET_PER_PRODUCER=catalogue=5000 is not a list of"
                                    + " name=calls/window")
                            .doesNotContain("IMAGE_WORKER_GATEWAY_BASE_URL is");
                });
        assertThat(exit.output())
                .as("no bean fails on a setting the check names")
                .doesNotContain("Exception");
    }

    /**
     * The S3 client is made and the bucket reached at start, as the consumer joins its group, not by the first request
     * (a replica started by a scale-out meets its backlog at once): with the store unreachable, the start says so in
     * one line before any request, and the worker keeps running (readiness says the rest).
     */
    @Test
    void reachesTheStoreAtStartAndSaysSoWhenItCannot() throws Exception {
        Process process = start(Map.of(
                "IMAGE_WORKER_GATEWAY_BASE_URL", gateway.baseUrl(),
                "IMAGE_WORKER_GATEWAY_API_KEY", gateway.validApiKey(),
                "IMAGE_WORKER_GATEWAY_MODEL", "gpt-image-2",
                "IMAGE_WORKER_STORAGE_ENDPOINT", "http://127.0.0.1:1",
                "IMAGE_WORKER_STORAGE_BUCKET", "unreachable",
                "IMAGE_WORKER_STORAGE_PING_TIMEOUT", "2s",
                "AWS_ACCESS_KEY_ID", "test",
                "AWS_SECRET_ACCESS_KEY", "test"));
        // Should the line never come, the process's end ends the read below.
        CompletableFuture.delayedExecutor(2, TimeUnit.MINUTES).execute(process::destroyForcibly);
        try (BufferedReader output =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            List<String> lines = new ArrayList<>();
            String warning = null;
            for (String line = output.readLine(); line != null; line = output.readLine()) {
                lines.add(line);
                if (line.contains("Bucket unreachable could not be reached at start")) {
                    warning = line;
                    break;
                }
            }
            assertThat(warning)
                    .as("the start's warning, in:%n%s", String.join("\n", lines))
                    .isNotNull();
            assertThat(warning).matches(DATED + " WARN .*");
            assertThat(process.isAlive()).as("still running").isTrue();
        } finally {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** An ISO-8601 timestamp with the date, the time to the millisecond and the offset, at the start of a line. */
    private static final String DATED = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}(Z|[+-]\\d{2}:\\d{2})";

    @Test
    void refusesToStartWhenTheBaseAddressAnswersInvalidUrlAndNeverLogsTheKey() throws Exception {
        String key = gateway.validApiKey();
        Exit exit = run(Map.of(
                "IMAGE_WORKER_GATEWAY_BASE_URL",
                gateway.baseUrl() + "/console",
                "IMAGE_WORKER_GATEWAY_API_KEY",
                key,
                "IMAGE_WORKER_GATEWAY_MODEL",
                "gpt-image-2"));

        assertThat(exit.code()).isEqualTo(1);
        assertThat(exit.output())
                .contains("the gateway address looks wrong")
                .contains(gateway.baseUrl() + "/console/v1/chat/completions")
                .doesNotContain(key);
        // The probe is unbillable: a wrong key, an empty body, never an image route.
        assertThat(gateway.imageCalls()).isEmpty();
    }
}
