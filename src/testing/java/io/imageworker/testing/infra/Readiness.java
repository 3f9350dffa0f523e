package io.imageworker.testing.infra;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;

/** Waiting for a server that is starting: a probe polled until it answers, given up at once if the process exits. */
final class Readiness {

    private Readiness() {}

    /**
     * Polls {@code probe} every {@code interval} (an exception counts as not yet) until it is true.
     *
     * @param server what the server is and where, for the messages: {@code Kafka at 127.0.0.1:9092}
     * @param state what the probe waits for: {@code answering}
     * @param alive false as soon as the server cannot come up any more (its process exited): fails at once
     * @param diagnostics what to add to a failure message (the end of its log)
     * @throws IllegalStateException when the probe is not true within {@code timeout}, or {@code alive} turns false
     */
    static void poll(
            String server,
            String state,
            Duration timeout,
            Duration interval,
            BooleanSupplier alive,
            Supplier<String> diagnostics,
            Callable<Boolean> probe) {
        try {
            await(server + " " + state)
                    .atMost(timeout)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(interval)
                    .ignoreExceptions()
                    .failFast("the process of " + server + " exited", () -> !alive.getAsBoolean())
                    .until(probe);
        } catch (ConditionTimeoutException | TerminalFailureException e) {
            throw new IllegalStateException(server + " did not become ready: " + e.getMessage() + diagnostics.get(), e);
        }
    }
}
