package io.imageworker.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.contract.Billing;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.TerminalEvent;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The status endpoint's reads of the store, bounded: a flood of queries for random ids takes at most {@code
 * max-lookups} reads at once (the rest refused at once, never queued), and a client polling an ended request reads
 * the store once. The store here is a function the test answers by hand, so that reads can be held in flight.
 */
class StatusLookupsTest {

    /** The reads asked of the store, by id, each waiting for the test's answer. */
    private final Map<String, UniEmitter<? super Optional<TerminalEvent>>> reads = new ConcurrentHashMap<>();

    private final List<String> asked = new ArrayList<>();

    private final StatusLookups lookups = new StatusLookups(
            requestId -> Uni.createFrom().emitter(emitter -> {
                asked.add(requestId);
                reads.put(requestId, emitter);
            }),
            2);

    @Test
    void aQueryBeyondMaxLookupsIsRefusedAtOnceWithoutReadingTheStore() {
        UniAssertSubscriber<Optional<TerminalEvent>> first = find("a");
        UniAssertSubscriber<Optional<TerminalEvent>> second = find("b");

        find("c").assertFailedWith(StatusLookups.TooManyLookups.class);
        assertThat(asked).containsExactly("a", "b");
        assertThat(lookups.running()).isEqualTo(2);

        reads.get("a").complete(Optional.empty());
        first.assertItem(Optional.empty());
        UniAssertSubscriber<Optional<TerminalEvent>> fourth = find("d");
        assertThat(asked).containsExactly("a", "b", "d");
        reads.get("b").fail(new IllegalStateException("the store is away"));
        second.assertFailedWith(IllegalStateException.class);
        reads.get("d").complete(Optional.empty());
        fourth.assertItem(Optional.empty());
        assertThat(lookups.running()).isZero();
    }

    @Test
    void oneProducersFloodIsRefusedWhileAnothersQueriesStillRead() {
        // Producer a takes its two reads, and is refused beyond them.
        UniAssertSubscriber<Optional<TerminalEvent>> first = find("a", "a/1");
        find("a", "a/2");
        for (int i = 3; i < 100; i++) {
            find("a", "a/" + i).assertFailedWith(StatusLookups.TooManyLookups.class);
        }
        // Producer b's queries read the store all the same, as many as its own bound.
        UniAssertSubscriber<Optional<TerminalEvent>> ofB = find("b", "b/1");
        find("b", "b/2");
        find("b", "b/3").assertFailedWith(StatusLookups.TooManyLookups.class);
        assertThat(asked).containsExactly("a/1", "a/2", "b/1", "b/2");
        reads.get("b/1").complete(Optional.empty());
        ofB.assertItem(Optional.empty());
        find("a", "a/100").assertFailedWith(StatusLookups.TooManyLookups.class);
        reads.get("a/1").complete(Optional.empty());
        first.assertItem(Optional.empty());
        find("a", "a/101");
        assertThat(asked).containsExactly("a/1", "a/2", "b/1", "b/2", "a/101");
    }

    @Test
    void aReadGivenUpFreesItsPlace() {
        find("a").cancel();
        find("b").cancel();

        assertThat(lookups.running()).isZero();
        find("c");
        assertThat(asked).containsExactly("a", "b", "c");
    }

    @Test
    void aTerminalEventIsReadOnceAndAnIdWithNoRecordEveryTime() {
        TerminalEvent ended = failed("ended");
        UniAssertSubscriber<Optional<TerminalEvent>> first = find("ended");
        reads.get("ended").complete(Optional.of(ended));
        first.assertItem(Optional.of(ended));

        for (int i = 0; i < 5; i++) {
            find("ended").assertItem(Optional.of(ended));
        }
        find("none");
        reads.get("none").complete(Optional.empty());
        find("none");

        assertThat(asked).containsExactly("ended", "none", "none");
    }

    @Test
    void keepsOnlyTheLastEventsRead() {
        for (int i = 0; i <= StatusLookups.CACHED; i++) {
            String id = "r-" + i;
            find(id);
            reads.get(id).complete(Optional.of(failed(id)));
        }
        asked.clear();

        find("r-" + StatusLookups.CACHED).assertItem(Optional.of(failed("r-" + StatusLookups.CACHED)));
        find("r-0");

        assertThat(asked).containsExactly("r-0");
    }

    private UniAssertSubscriber<Optional<TerminalEvent>> find(String requestId) {
        return lookups.find(requestId).subscribe().withSubscriber(UniAssertSubscriber.create());
    }

    private UniAssertSubscriber<Optional<TerminalEvent>> find(String producer, String name) {
        return lookups.find(producer, name).subscribe().withSubscriber(UniAssertSubscriber.create());
    }

    private static final Instant AT = Instant.parse("2026-01-05T10:17:02Z");

    private static TerminalEvent failed(String requestId) {
        return new TerminalEvent.Failed(
                requestId,
                "generate",
                new TerminalEvent.Error(ErrorCode.INVALID_REQUEST, "refused", false, null, null),
                null,
                null,
                0,
                Billing.NONE,
                new TerminalEvent.Timings(AT, AT, AT, null, null),
                Map.of(),
                null);
    }
}
