package io.imageworker.api;

import io.imageworker.contract.TerminalEvent;
import io.imageworker.storage.ResultLedger;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The status endpoint's reads of the result ledger, bounded: the endpoint is unauthenticated, and each of its reads is
 * a HEAD and a GET on the pipeline's own S3 client, so a flood of queries for random ids would take the connections
 * and the store's request rate the pipeline's ledger lookups need. At most {@code IMAGE_WORKER_STATUS_MAX_LOOKUPS}
 * reads run at once; a query beyond them is refused at once ({@link TooManyLookups}, answered 429), not queued. The
 * last {@value #CACHED} terminal events read are kept (a terminal event never changes), so that a client polling an
 * ended request reads the store once. An id with no record is never kept: it may be recorded the next moment.
 *
 * <p>The bound is per caller ({@link #find(String, String)}): with producers taken from their topics, each producer's
 * status queries (authenticated by {@link StatusCallers}) have {@code max-lookups} reads of their own, so that one
 * producer's flood is refused while another's queries still read the store (the store then sees at most {@code
 * max-lookups} reads per producer at once). With declared producers every query is one caller's, as before.
 */
@ApplicationScoped
public class StatusLookups {

    /** How many terminal events read are kept: small, a recorded event is at most some tens of KiB. */
    static final int CACHED = 256;

    /** The one caller of declared producers' queries. */
    static final String ANYONE = "";

    private final Function<String, Uni<Optional<TerminalEvent>>> read;
    private final int maxLookups;
    /** The reads running now, by caller; a caller's counter is made once and kept (callers are few: producers). */
    private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();

    private final Map<String, TerminalEvent> recent = new LinkedHashMap<>(CACHED, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, TerminalEvent> eldest) {
            return size() > CACHED;
        }
    };

    @Inject
    StatusLookups(ResultLedger ledger, StatusSettings config) {
        this(ledger::peek, config.maxLookups());
    }

    /** Lookups that {@code read} a request's record, at most {@code maxLookups} at once. */
    StatusLookups(Function<String, Uni<Optional<TerminalEvent>>> read, int maxLookups) {
        this.read = read;
        this.maxLookups = Math.max(1, maxLookups);
    }

    /**
     * The recorded terminal event of {@code requestId}, or empty; fails with {@link TooManyLookups} when {@code
     * max-lookups} reads run already, or with the store's failure.
     */
    Uni<Optional<TerminalEvent>> find(String requestId) {
        return find(ANYONE, requestId);
    }

    /**
     * {@link #find(String)} of a query by {@code caller} (a producer, or {@link #ANYONE}): fails with {@link
     * TooManyLookups} when {@code max-lookups} reads of that caller run already, whatever the others' do.
     */
    Uni<Optional<TerminalEvent>> find(String caller, String requestId) {
        return Uni.createFrom().deferred(() -> {
            TerminalEvent kept = kept(requestId);
            if (kept != null) {
                return Uni.createFrom().item(Optional.of(kept));
            }
            AtomicInteger reads = running.computeIfAbsent(caller, name -> new AtomicInteger());
            if (reads.incrementAndGet() > maxLookups) {
                reads.decrementAndGet();
                return Uni.createFrom().failure(new TooManyLookups());
            }
            return read.apply(requestId)
                    .onTermination()
                    .invoke(reads::decrementAndGet)
                    .invoke(found -> found.ifPresent(event -> keep(requestId, event)));
        });
    }

    /** Status reads of the store running now, of every caller. */
    int running() {
        return running.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    private synchronized TerminalEvent kept(String requestId) {
        return recent.get(requestId);
    }

    private synchronized void keep(String requestId, TerminalEvent event) {
        recent.put(requestId, event);
    }

    /** A status query refused because as many store reads as allowed run already. */
    static final class TooManyLookups extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TooManyLookups() {
            super("too many status queries read the store at once", null, false, false);
        }
    }
}
