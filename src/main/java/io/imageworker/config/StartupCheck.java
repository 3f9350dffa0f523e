package io.imageworker.config;

import io.imageworker.gateway.GatewayEndpoint;
import io.quarkus.logging.Log;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Refuses to start without the settings the worker cannot guess: the gateway's base URL, API key and model. Each
 * missing or malformed one is named in one line, then the process exits with status 1, before any record is read.
 */
@ApplicationScoped
public class StartupCheck {

    private final WorkerConfig config;
    private volatile boolean passed;

    StartupCheck(WorkerConfig config) {
        this.config = config;
    }

    void check(@Observes @Priority(1) StartupEvent event) {
        List<String> problems = problems(config);
        if (problems.isEmpty()) {
            passed = true;
            return;
        }
        Log.errorf("image-worker cannot start: %s", String.join("; ", problems));
        Quarkus.asyncExit(1);
    }

    /** Whether the configuration is complete; nothing is consumed otherwise. */
    public boolean passed() {
        return passed;
    }

    static List<String> problems(WorkerConfig config) {
        List<String> problems = new ArrayList<>();
        Optional<String> baseUrl = config.gateway().baseUrl().filter(s -> !s.isBlank());
        if (baseUrl.isEmpty()) {
            problems.add(
                    "IMAGE_WORKER_GATEWAY_BASE_URL is not set (the gateway origin, e.g. https://gateway.example.com)");
        } else {
            try {
                GatewayEndpoint.parse(baseUrl.get());
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        if (config.gateway().apiKey().filter(s -> !s.isBlank()).isEmpty()) {
            problems.add("IMAGE_WORKER_GATEWAY_API_KEY is not set (the sk- token created in the gateway's console)");
        }
        if (config.gateway().model().filter(s -> !s.isBlank()).isEmpty()) {
            problems.add("IMAGE_WORKER_GATEWAY_MODEL is not set (the image model identifier, written in full)");
        }
        if (config.concurrency() < 1) {
            problems.add("IMAGE_WORKER_CONCURRENCY must be at least 1");
        }
        return problems;
    }
}
