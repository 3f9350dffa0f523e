package io.imageworker.gateway;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * The gateway this worker turns into a pipeline ({@code image-worker.gateway.*}, {@code IMAGE_WORKER_GATEWAY_*}): its
 * address, key and model, the calls' timeouts and connections, how edits are sent, what a fault pauses. Read by this
 * package, by the plan of a call ({@code processing.CallPlanner}), by the status read model (the rate of calls) and by
 * the start-up check; the graces of {@code config.WorkerConfig} default to a whole call, {@link #timeout()}.
 */
@ConfigMapping(prefix = "image-worker.gateway")
public interface GatewaySettings {
    /** The gateway origin; {@code https://host}, {@code https://host/}, {@code https://host/v1} are the same. */
    Optional<String> baseUrl();

    /** The {@code sk-} bearer token. Never logged, never put in an event. */
    Optional<String> apiKey();

    /** The image model identifier, sent as {@code model}. */
    Optional<String> model();

    /** Time allowed for one gateway call, headers and body. */
    @WithDefault("180s")
    Duration timeout();

    /** Time allowed to open a connection to the gateway. */
    @WithDefault("10s")
    Duration connectTimeout();

    /**
     * How long an idle keep-alive connection to the gateway is kept for the next call. Shorter than the servers'
     * own idle timeouts (Node.js closes after 5 s), so that the worker, not the server, closes an idle
     * connection; whole seconds, at least 1.
     */
    @WithDefault("4s")
    Duration keepAliveTimeout();

    /** {@code multi} sends every reference as {@code image[]} in order; {@code single} only the base image. */
    @WithDefault("multi")
    EditMode editMode();

    /** Largest gateway answer read, in bytes (a 4K PNG as base64 is about 30 MB). */
    @WithDefault("67108864")
    int maxResponseBytes();

    /**
     * The socket receive buffer of each gateway connection ({@code SO_RCVBUF}), in bytes: the most of an answer
     * the kernel holds for a call whose answer waits, paused, for the memory budget (Linux reserves up to twice
     * it), and the TCP window that bounds one answer's download speed (bytes per round trip).
     */
    @WithDefault("1048576")
    int receiveBuffer();

    /** How much of a gateway answer is kept in an event's {@code gatewayBody}. */
    @WithDefault("2048")
    int keepBodyChars();

    /**
     * Probe the base address once at start with an unbillable call (a wrong key and an empty body must get 401);
     * a 404 or an HTML page stops start-up with a message saying what to check.
     */
    @WithDefault("true")
    boolean checkAtStart();

    /** Gateway faults (401, wrong address) in a row after which intake pauses and the gateway is probed. */
    @WithDefault("3")
    int faultThreshold();

    /** How often a paused worker probes the gateway, with calls that cannot be billed. */
    @WithDefault("30s")
    Duration probeInterval();

    /** Ask for a {@code url} or {@code b64_json} answer; empty sends no {@code response_format}. */
    Optional<String> responseFormat();

    /**
     * Hosts of the gateway's {@code url} answers that run inside the operator's own network (the gateway's own
     * file server, say), named exactly: an answer URL on one of them may be plain {@code http} and its addresses
     * may be loopback, private or carrier-grade NAT ones. Every other answer URL must be {@code https} on public
     * addresses only, as references are; link-local (cloud metadata) addresses are refused for every host. Empty
     * (the default) lists none.
     */
    Optional<Set<String>> urlInternalHosts();

    /** How edit references are sent. */
    enum EditMode {
        /** every reference as an {@code image[]} part, in order. */
        multi,
        /**
         * only the base image, as one {@code image} part. The other references are still read and checked, so that
         * whether a request is accepted does not depend on how the worker is deployed.
         */
        single
    }
}
