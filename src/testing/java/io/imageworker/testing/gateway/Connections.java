package io.imageworker.testing.gateway;

import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Keep-alive connections as a server with an idle timeout sees them (Node.js closes an idle one after 5 s). The
 * dangerous moment for a client is the race between the server closing an idle connection and the client sending a
 * new request on it: the request is written, the connection closes, no byte of an answer comes, and the server never
 * read it. Timing cannot make that race happen on demand, so it is played deterministically: a request that arrives
 * on a connection idle for longer than {@code staleAfter} is dropped unread and the connection closes.
 */
final class Connections {

    private static final int KEPT_IDLE_TIMES = 1000;

    private final Map<HttpConnection, Long> idleSince = new ConcurrentHashMap<>();
    private final Set<HttpConnection> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger dropped = new AtomicInteger();
    /** The newest {@link #KEPT_IDLE_TIMES} idle times at close: the local run never resets its simulator. */
    private final Deque<Duration> idleAtClose = new ArrayDeque<>();

    /**
     * Whether {@code req} arrived on a stale connection and was dropped; otherwise the connection is marked busy until
     * the answer has been written.
     */
    boolean droppedAsStale(HttpServerRequest req, Duration staleAfter) {
        HttpConnection connection = req.connection();
        Long idle = idleSince.remove(connection);
        if (!staleAfter.isZero() && idle != null && System.nanoTime() - idle > staleAfter.toNanos()) {
            dropped.incrementAndGet();
            connection.close();
            return true;
        }
        if (open.add(connection)) {
            connection.closeHandler(v -> {
                open.remove(connection);
                Long since = idleSince.remove(connection);
                if (since != null) {
                    keepIdleTime(Duration.ofNanos(System.nanoTime() - since));
                }
            });
        }
        req.response().endHandler(v -> idleSince.put(connection, System.nanoTime()));
        return false;
    }

    /** Connections open now (that carried at least one request). */
    int open() {
        return open.size();
    }

    /** Connections idle now for longer than {@code idle}. */
    int idleLongerThan(Duration idle) {
        long now = System.nanoTime();
        return (int) idleSince.values().stream()
                .filter(since -> now - since > idle.toNanos())
                .count();
    }

    /**
     * How long each connection closed while idle had been idle when it closed (the client's keep-alive timeout as a
     * server sees it), since the last reset.
     */
    List<Duration> idleAtClose() {
        synchronized (idleAtClose) {
            return List.copyOf(idleAtClose);
        }
    }

    private void keepIdleTime(Duration idle) {
        synchronized (idleAtClose) {
            if (idleAtClose.size() == KEPT_IDLE_TIMES) {
                idleAtClose.removeFirst();
            }
            idleAtClose.addLast(idle);
        }
    }

    /** Requests dropped on stale connections since the last reset. */
    int dropped() {
        return dropped.get();
    }

    void reset() {
        dropped.set(0);
        synchronized (idleAtClose) {
            idleAtClose.clear();
        }
    }
}
