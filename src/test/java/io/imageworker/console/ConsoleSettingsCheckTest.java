package io.imageworker.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.TestConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Start-up refuses console settings it cannot honour, whether the console is on or not. */
class ConsoleSettingsCheckTest {

    private static ConsoleSettings console(Map<String, String> settings) {
        return TestConfig.settings(ConsoleSettings.class, settings);
    }

    @Test
    void acceptsTheDefaultsAndEveryAction() {
        assertThat(ConsoleSettingsCheck.problems(console(Map.of()))).isEmpty();
        assertThat(ConsoleSettingsCheck.problems(console(Map.of(
                        "image-worker.console.actions", "cancel,submit", "image-worker.console.max-entries", "1"))))
                .isEmpty();
    }

    @Test
    void refusesAnActionItDoesNotKnowWhetherOnOrOff() {
        for (String enabled : new String[] {"true", "false"}) {
            assertThat(ConsoleSettingsCheck.problems(console(Map.of(
                            "image-worker.console.enabled",
                            enabled,
                            "image-worker.console.actions",
                            "cancel,delete,submit"))))
                    .as("enabled=%s", enabled)
                    .containsExactly("IMAGE_WORKER_CONSOLE_ACTIONS: 'delete' is not one of cancel, submit");
        }
    }

    @Test
    void refusesAFeedOfNoEntry() {
        assertThat(ConsoleSettingsCheck.problems(console(Map.of("image-worker.console.max-entries", "0"))))
                .containsExactly("IMAGE_WORKER_CONSOLE_MAX_ENTRIES must be at least 1");
    }
}
