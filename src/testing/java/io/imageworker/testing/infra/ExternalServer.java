package io.imageworker.testing.infra;

/**
 * A server that was already running, named by an environment variable (its {@link #description()} says which): the
 * tests only use it, they cannot stop, start or kill it. What {@link ExternalKafka} and {@link ExternalStore} share.
 */
interface ExternalServer extends ManagedServer {

    @Override
    default ServerMode mode() {
        return ServerMode.EXTERNAL;
    }

    @Override
    default boolean supportsRestart() {
        return false;
    }

    @Override
    default void stop() {
        throw unsupported();
    }

    @Override
    default void start() {
        throw unsupported();
    }

    @Override
    default void kill() {
        throw unsupported();
    }

    private UnsupportedOperationException unsupported() {
        return new UnsupportedOperationException("The " + description() + " is a server the tests do not own: they"
                + " cannot stop or start it. Unset that variable to run them against a server they own.");
    }
}
