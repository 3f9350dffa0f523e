package io.imageworker.health;

import io.imageworker.api.StatusSettings;
import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.gateway.GatewayClient;
import io.imageworker.gateway.GatewayEndpoint;
import io.imageworker.gateway.GatewaySettings;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.reference.ReferenceSettings;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.storage.StorageSettings;
import io.imageworker.support.RetrySettings;
import io.quarkus.logging.Log;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * Refuses to start without the settings the worker cannot guess (the gateway's base URL, API key and model), or with
 * settings that contradict each other ({@link ConfigurationCheck}, and the {@link SettingsCheck} of each layer above:
 * the console's), and probes the gateway's address. Each problem is named in one line, then the process exits with status 1,
 * before any record is read.
 */
@ApplicationScoped
public class StartupCheck {

    private final WorkerConfig config;
    private final ConfigurationCheck.Settings settings;
    /** The checks of the settings of the layers above (the console's). */
    private final Instance<SettingsCheck> above;

    private volatile boolean passed;

    StartupCheck(
            WorkerConfig config,
            TopicSettings topic,
            RetrySettings retry,
            StorageSettings storage,
            BudgetSettings budget,
            StatusSettings status,
            GatewaySettings gateway,
            ReferenceSettings reference,
            Instance<SettingsCheck> above) {
        this.config = config;
        this.above = above;
        this.settings =
                new ConfigurationCheck.Settings(config, topic, retry, storage, budget, status, gateway, reference);
    }

    void check(@Observes @Priority(1) StartupEvent event, GatewayClient gateway) {
        List<String> problems = problems(settings, ConfigProvider.getConfig(), above);
        if (problems.isEmpty() && settings.gateway().checkAtStart()) {
            addressProblem(gateway).ifPresent(problems::add);
        }
        if (problems.isEmpty()) {
            warnOfAShortGrace(settings);
            passed = true;
            return;
        }
        Log.errorf("image-worker cannot start: %s", String.join("; ", problems));
        Quarkus.asyncExit(1);
    }

    /**
     * A shutdown grace shorter than a gateway call is allowed (a deployment may prefer fast rollouts), but each rollout,
     * scale-in or node drain then cuts off the slowest calls, which the next worker makes, and pays for, again.
     */
    private static void warnOfAShortGrace(ConfigurationCheck.Settings settings) {
        WorkerConfig config = settings.worker();
        Duration grace =
                config.drainGrace(settings.gateway().timeout(), settings.retry().infrastructurePatience());
        if (grace.compareTo(settings.gateway().timeout()) < 0) {
            Log.warnf(
                    "IMAGE_WORKER_SHUTDOWN_GRACE (%s) is shorter than IMAGE_WORKER_GATEWAY_TIMEOUT (%s): a call still"
                            + " running when a rollout stops this worker is cut off, redelivered and billed again",
                    grace, settings.gateway().timeout());
        }
    }

    /**
     * One unbillable probe of the base address: a deliberately wrong key and an empty JSON body on the chat route
     * must get 401, because authentication is checked before the body on every real route (gateway contract §3). A 404 or an
     * HTML page means the address is wrong; anything else (the gateway down, a timeout) is left to the retries and
     * to readiness, since the address may well be right.
     */
    private Optional<String> addressProblem(GatewayClient gateway) {
        String tried = gateway.endpoint().resolve(GatewayEndpoint.CHAT);
        try {
            int status = gateway.probe(GatewayEndpoint.CHAT, false).await().atMost(config.startupWait());
            if (status == 404 || status < 0 || status >= 300 && status < 400) {
                return Optional.of("the gateway address looks wrong: POST " + tried + " with a wrong key answered "
                        + (status < 0 ? "an HTML page (" + -status + ")" : String.valueOf(status))
                        + " instead of 401. IMAGE_WORKER_GATEWAY_BASE_URL must be the gateway origin, with or"
                        + " without /v1 (gateway contract §2), not the web console");
            }
            if (status != 401) {
                Log.warnf("Start-up probe of %s answered %d (401 expected); going on", tried, status);
            }
        } catch (RuntimeException e) {
            Log.warnf(
                    "Start-up probe of %s failed (%s); going on, readiness and retries will tell", tried, e.toString());
        }
        return Optional.empty();
    }

    /** Whether the configuration is complete; nothing is consumed otherwise. */
    public boolean passed() {
        return passed;
    }

    /**
     * The settings' problems: those of {@link #problems(ConfigurationCheck.Settings, Config)}, then those of each check
     * of the settings of a layer above ({@code above}).
     */
    static List<String> problems(
            ConfigurationCheck.Settings settings, Config channels, Iterable<? extends SettingsCheck> above) {
        List<String> problems = problems(settings, channels);
        above.forEach(check -> problems.addAll(check.problems()));
        return problems;
    }

    /**
     * The settings' problems: those {@link ConfigurationCheck} finds from the settings alone, and those only the owner
     * of a setting can tell (the gateway's address, the memory budget).
     */
    static List<String> problems(ConfigurationCheck.Settings settings, Config channels) {
        WorkerConfig config = settings.worker();
        List<String> problems = new ArrayList<>(ConfigurationCheck.problems(settings, channels));
        settings.gateway().baseUrl().filter(s -> !s.isBlank()).ifPresent(baseUrl -> {
            try {
                GatewayEndpoint.parse(baseUrl);
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        });
        try {
            MemoryBudget.budgetOf(config.memoryBudget(), Runtime.getRuntime().maxMemory());
        } catch (IllegalArgumentException invalid) {
            problems.add(invalid.getMessage());
        }
        return problems;
    }
}
