package io.imageworker.console;

import io.imageworker.health.SettingsCheck;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;

/**
 * The console's settings, checked at start-up whether the console is on or not ({@code health.StartupCheck} adds
 * these problems to its own and refuses to start on any): each action one of {@link ConsoleSettings#ACTIONS}, and a
 * feed of at least one entry.
 */
@ApplicationScoped
public class ConsoleSettingsCheck implements SettingsCheck {

    private final ConsoleSettings console;

    @Inject
    ConsoleSettingsCheck(ConsoleSettings console) {
        this.console = console;
    }

    @Override
    public List<String> problems() {
        return problems(console);
    }

    /** Each problem of {@code console}, in one line each. */
    static List<String> problems(ConsoleSettings console) {
        List<String> problems = new ArrayList<>();
        console.actions().orElse(List.of()).stream()
                .filter(action -> !ConsoleSettings.ACTIONS.contains(action))
                .forEach(action -> problems.add("IMAGE_WORKER_CONSOLE_ACTIONS: '" + action + "' is not one of "
                        + String.join(", ", ConsoleSettings.ACTIONS)));
        if (console.maxEntries() < 1) {
            problems.add("IMAGE_WORKER_CONSOLE_MAX_ENTRIES must be at least 1");
        }
        return problems;
    }
}
