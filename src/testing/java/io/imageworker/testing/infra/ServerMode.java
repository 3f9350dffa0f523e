package io.imageworker.testing.infra;

/** How a server used by the tests is provided. */
public enum ServerMode {
    /** A server that was already running, named by an environment variable; tests cannot stop or restart it. */
    EXTERNAL,
    /** A Testcontainers container, where a Docker engine is reachable. */
    CONTAINER,
    /** A server in a child JVM started by the tests themselves: the mode without Docker. */
    EMBEDDED
}
