package io.imageworker.testing.launch;

import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Logging of the tools' JVMs (local run, benchmark, fault suite): their own lines, not the Kafka clients' configuration dumps. */
public final class LaunchLogging {

    /** Held, so that the levels set here are not lost when java.util.logging lets go of an unreferenced logger. */
    private static final List<Logger> QUIETED =
            List.of(Logger.getLogger("org.apache.kafka"), Logger.getLogger("io.netty"), Logger.getLogger("io.vertx"));

    private LaunchLogging() {}

    /** Warnings and errors only from the Kafka clients, Netty and Vert.x. */
    public static void quiet() {
        QUIETED.forEach(logger -> logger.setLevel(Level.WARNING));
    }
}
