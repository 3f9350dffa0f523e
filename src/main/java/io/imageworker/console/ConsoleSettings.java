package io.imageworker.console;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.util.List;
import java.util.Optional;

/**
 * The console (issue 52, {@code image-worker.console.*}, {@code IMAGE_WORKER_CONSOLE_*}): a page served by the worker
 * under {@code /console}, off by default ({@link ConsoleRoutes}): recent requests of the whole fleet read from the
 * result topics by a consumer of its own, their images streamed from the store, the queue as this replica holds it.
 * Nothing of it runs while it is off (no consumer, no work). Its settings are checked at start-up by {@link
 * ConsoleSettingsCheck}, whatever {@link #enabled()} says.
 */
@ConfigMapping(prefix = "image-worker.console")
public interface ConsoleSettings {

    /** The actions {@link #actions()} may name. */
    List<String> ACTIONS = List.of("cancel", "submit");

    /** Serve the console under {@code /console} ({@code IMAGE_WORKER_CONSOLE_ENABLED}); off by default. */
    @WithDefault("false")
    boolean enabled();

    /**
     * The token that admits to the console ({@code IMAGE_WORKER_CONSOLE_TOKEN}): sent as {@code Authorization:
     * Bearer <token>}, or typed once in the page's form, which sets a cookie. Empty: anyone who reaches the port
     * is admitted.
     */
    Optional<String> token();

    /**
     * What the console may do besides reading ({@code IMAGE_WORKER_CONSOLE_ACTIONS}), among {@link #ACTIONS}: {@code
     * cancel} (publish a cancel of a request to the cancel topic) and {@code submit} (publish a request typed in the
     * page). Empty: read-only.
     */
    Optional<List<String>> actions();

    /**
     * With {@code WorkerConfig#producerIdentity()} {@code topic}: admit each producer by its status credential
     * ({@code status.tokens}, or the {@code status.producer-header} of an ingress) to a view of the console that
     * shows that producer's requests, images, queue and spend only, and acts only as it ({@code
     * IMAGE_WORKER_CONSOLE_PRODUCER_ACCESS}). The console is then behind a credential even without {@link
     * #token()}, which alone sees every producer's. Off by default; ignored (with a warning) with {@code
     * declared}.
     */
    @WithDefault("false")
    boolean producerAccess();

    /** Most requests the console keeps ({@code IMAGE_WORKER_CONSOLE_MAX_ENTRIES}); its bytes are bounded too. */
    @WithDefault("10000")
    int maxEntries();
}
