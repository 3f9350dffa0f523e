package io.imageworker.messaging.sidetopics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The records of one side topic (the budget log, the cancel topic) that its reader skips because they cannot be
 * applied: anyone who may write the topic can write them, so a skipped record must never stop the reader (it is passed,
 * and a reader that starts again skips it the same way), never flood the log, and never go unseen. Each is counted in
 * {@code image_worker_side_topic_records_skipped_total{topic, reason}} (alert {@code
 * ImageWorkerSideTopicRecordsSkipped}), and logged at most once per {@link #LOG_EVERY} per topic: the first line says
 * the record, the next says how many were skipped in between.
 *
 * <p>Used by one reader thread; the counters are Micrometer's (thread-safe).
 */
final class SkippedRecords {

    /** The counter's name, as registered (Prometheus adds {@code _total}). */
    static final String METRIC = "image_worker_side_topic_records_skipped";
    /** At most one log line per topic this often. */
    static final Duration LOG_EVERY = Duration.ofSeconds(30);

    /** Why a record was skipped: the {@code reason} label. */
    enum Reason {
        /** Not a record of the topic at all: not JSON, wrong types, an unknown kind, a tombstone where none belongs. */
        UNREADABLE("unreadable"),
        /** Readable, but a field it needs is missing or blank. */
        INCOMPLETE("incomplete"),
        /** A budget claim or release for a window beyond the next one, by the reader's clock. */
        WINDOW_AHEAD("window_ahead"),
        /** A budget release of a claim that holds a place, without the claim's secret: not by the claim's writer. */
        FOREIGN_RELEASE("foreign_release"),
        /** The reader failed on the record in a way it did not foresee (a bug): passed rather than read forever. */
        FAILED("failed");

        final String label;

        Reason(String label) {
            this.label = label;
        }
    }

    /** The reasons a budget-log record may be skipped for. */
    static final Reason[] BUDGET = Reason.values();
    /** The reasons a cancel-topic record may be skipped for. */
    static final Reason[] CANCEL = {Reason.UNREADABLE, Reason.FAILED};

    private final String who;
    private final LongSupplier nanos;
    private final Map<Reason, Counter> counters = new EnumMap<>(Reason.class);
    /** When (by {@link #nanos}) the last line was logged; {@code null} before the first. */
    private Long lastLogged;
    /** Records skipped since the last line, not logged. */
    private long suppressed;

    /**
     * The skipped records of the side topic {@code topic} (the {@code topic} label: {@code budget} or {@code cancel},
     * not the topic's name, which a deployment chooses), for the {@code reasons} it may skip, logged with {@code who}
     * first, at most once per {@link #LOG_EVERY} on {@code nanos}.
     */
    SkippedRecords(MeterRegistry registry, String topic, Reason[] reasons, String who, LongSupplier nanos) {
        this.who = who;
        this.nanos = nanos;
        for (Reason reason : reasons) {
            counters.put(reason, register(registry, topic, reason));
        }
    }

    /** Registers the counter of {@code topic} and {@code reason} (exported as 0 before any record is skipped). */
    static Counter register(MeterRegistry registry, String topic, Reason reason) {
        return Counter.builder(METRIC)
                .description("Records of a side topic (the budget log, the cancel topic) that its reader skipped"
                        + " because they cannot be applied (docs/delivery-semantics.md, Trust model)")
                .tag("topic", topic)
                .tag("reason", reason.label)
                .register(registry);
    }

    /** Skips {@code record} for {@code reason}, {@code detail} saying what was wrong with it. */
    void skip(ConsumerRecord<?, ?> record, Reason reason, String detail) {
        counters.get(reason).increment();
        long now = nanos.getAsLong();
        if (lastLogged != null && now - lastLogged < LOG_EVERY.toNanos()) {
            suppressed++;
            return;
        }
        Log.warnf(
                "%s: skipping record %d of %s-%d (%s: %s)%s",
                who,
                record.offset(),
                record.topic(),
                record.partition(),
                reason.label,
                detail,
                suppressed == 0
                        ? ""
                        : String.format(
                                "; %d more skipped since the last line, not logged (see %s_total)",
                                suppressed, METRIC));
        lastLogged = now;
        suppressed = 0;
    }

    /** Records skipped so far for {@code reason}. */
    long count(Reason reason) {
        Counter counter = counters.get(reason);
        return counter == null ? 0 : (long) counter.count();
    }
}
