package io.imageworker.health;

import java.util.List;

/**
 * The check of settings that a layer above this one owns (the console's), which {@link ConfigurationCheck} cannot
 * read without reaching up: a bean of that layer implements it, and {@link StartupCheck} adds its problems to its
 * own, so that start-up refuses them as it refuses any other (one line, exit 1, no record consumed).
 */
@FunctionalInterface
public interface SettingsCheck {

    /** Each problem of the settings checked, in one line each, naming the setting as an environment variable. */
    List<String> problems();
}
