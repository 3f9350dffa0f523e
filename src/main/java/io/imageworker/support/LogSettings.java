package io.imageworker.support;

import io.quarkus.arc.Unremovable;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * How the worker writes its log ({@code image-worker.log.*}, {@code IMAGE_WORKER_LOG_*}). No class reads it: Quarkus's
 * logging takes {@link #json()} from application.properties, where {@code quarkus.log.console.json.enabled} is
 * {@code image-worker.log.json} ({@code false} when absent), before any bean exists. It is a mapping all the same so that the setting is declared
 * and documented where the others are, and named among the worker's settings ({@code TestConfig.MAPPINGS}, which the
 * tests of the names enumerate). Quarkus registers only the mappings something injects, hence {@link Unremovable}: the
 * started worker has it ({@code SettingsMappingsTest}). It lives in {@code support}, beside the other concerns every
 * layer shares (threads, tracing, metrics), since every layer writes the log.
 */
@ConfigMapping(prefix = "image-worker.log")
@Unremovable
public interface LogSettings {

    /**
     * Write each log line as one JSON object (ISO-8601 {@code timestamp}, {@code level}, {@code loggerName}, {@code
     * message}, {@code exception}...) for a log pipeline that parses them; else plain dated lines. Its default is the
     * one application.properties gives when the setting is absent.
     */
    @WithDefault("false")
    boolean json();
}
