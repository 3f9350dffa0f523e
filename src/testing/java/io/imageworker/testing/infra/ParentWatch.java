package io.imageworker.testing.infra;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.util.Arrays;

/**
 * Main class of every server JVM started by {@link ChildJvm}: runs the server's own main class, and ends the JVM
 * (cleanly, its shutdown hooks run) once the JVM that started it is gone. Its standard input is a pipe from that
 * JVM, which the operating system closes however that JVM ends, even by SIGKILL: without this watch a broker would
 * outlive a killed test run and keep its ports and data directory.
 *
 * <p>Runs in the server JVM with nothing of the tests on the classpath: it must use the JDK only.
 */
final class ParentWatch {

    private ParentWatch() {}

    /**
     * @param args the server's main class, then its arguments
     */
    public static void main(String[] args) throws Throwable {
        Thread watch = new Thread(ParentWatch::exitAtEndOfInput, "parent-watch");
        watch.setDaemon(true);
        watch.start();
        try {
            Class.forName(args[0]).getMethod("main", String[].class).invoke(null, (Object)
                    Arrays.copyOfRange(args, 1, args.length));
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static void exitAtEndOfInput() {
        try {
            while (System.in.read() != -1) {
                // Nothing is ever sent; only the end of the stream matters.
            }
        } catch (IOException e) {
            // A broken pipe means the same: the parent is gone.
        }
        System.err.println("parent-watch: the JVM that started this server is gone; shutting down");
        System.exit(0);
    }
}
