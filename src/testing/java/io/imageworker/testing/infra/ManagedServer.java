package io.imageworker.testing.infra;

/**
 * A server the tests talk to, whichever way it runs ({@link #mode()}): what a Kafka cluster and an S3 store have in
 * common. Tests use the server's address and do not care about the mode; fault tests first check
 * {@link #supportsRestart()}.
 */
public interface ManagedServer {

    /** How this server is provided. */
    ServerMode mode();

    /** What it is and where, for the log line that says which server the tests use. */
    String description();

    /** Whether {@link #stop()}, {@link #start()}, {@link #restart()} and {@link #kill()} work in this mode. */
    default boolean supportsRestart() {
        return true;
    }

    /**
     * Stops the server gracefully and returns once it is down; its data (records, offsets, objects) stays.
     *
     * @throws UnsupportedOperationException when {@link #supportsRestart()} is false
     */
    void stop();

    /**
     * Starts the server again on the same address and data, and returns once it answers. Does nothing when it runs.
     *
     * @throws UnsupportedOperationException when {@link #supportsRestart()} is false
     */
    void start();

    /** {@link #stop()} then {@link #start()}. */
    default void restart() {
        stop();
        start();
    }

    /**
     * Kills the server at once, without a clean shutdown; {@link #start()} brings it back.
     *
     * @throws UnsupportedOperationException when {@link #supportsRestart()} is false
     */
    void kill();
}
