package io.imageworker.testing.infra;

import java.io.IOException;
import java.io.PrintStream;
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

    /** Marks a tool to run before the server, in the same JVM: {@code --first <class> <count> <count arguments>}. */
    static final String FIRST = "--first";

    /**
     * @param args the server's main class, then its arguments; before them, optionally, {@link #FIRST}, a tool's
     *     class, the number of its arguments and those arguments: the tool's static {@code int execute(String[],
     *     PrintStream)} runs first (as Kafka's storage formatter's does: its work without its {@code main}'s exit) and
     *     the server starts only if it returned 0. One JVM instead of two: the formatter's own JVM was about half a
     *     broker's start (3 s of 6 on a quiet machine, 11 s of 20 with three test JVMs starting theirs).
     */
    public static void main(String[] args) throws Throwable {
        Thread watch = new Thread(ParentWatch::exitAtEndOfInput, "parent-watch");
        watch.setDaemon(true);
        watch.start();
        int server = 0;
        if (args.length > 0 && FIRST.equals(args[0])) {
            int count = Integer.parseInt(args[2]);
            server = 3 + count;
            Object status = invoke(args[1], "execute", Arrays.copyOfRange(args, 3, server), System.out);
            if (!Integer.valueOf(0).equals(status)) {
                throw new IllegalStateException(args[1] + " returned " + status + "; the server is not started");
            }
        }
        invoke(args[server], "main", (Object) Arrays.copyOfRange(args, server + 1, args.length));
    }

    /** Calls the static method {@code name} of {@code className} taking these arguments' types. */
    private static Object invoke(String className, String name, Object... arguments) throws Throwable {
        Class<?>[] types = Arrays.stream(arguments)
                .map(argument -> argument instanceof String[] ? String[].class : PrintStream.class)
                .toArray(Class<?>[]::new);
        try {
            return Class.forName(className).getMethod(name, types).invoke(null, arguments);
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
