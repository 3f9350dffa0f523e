package io.imageworker.messaging.parking;

import io.imageworker.config.WorkerConfig;
import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.support.Shutdown;
import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.quarkus.runtime.Startup;
import io.smallrye.reactive.messaging.kafka.KafkaClientService;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;

/**
 * Keeps one producer's parked backlog from standing before the others' parked records (fair shares at any backlog).
 * The parked topic is read by one consumer into the normal lane, and a record read back is never parked again: it
 * waits in its producer's line. That stream took at most {@code IMAGE_WORKER_PARK_AFTER} records at once: the first
 * ones read back, of the backlog parked first, held those places through their turns and calls, and another
 * producer's parked records came in only as they ended. Measured behind 50,000 of A with calls of 5 s and 2 s (the
 * parking regime, {@code -Dbench.until-b=true}), B's first parked records were fetched 45 s after A's publication, and B's median call came about seven call lengths after its share said: a delay that grows with the
 * length of the calls, which calls of 100 ms hid.
 *
 * <p>So the parked stream takes as many records at once as the lane's own ({@code messaging.intake.Lanes}), and each
 * partition of the parked topic is held to its share instead: once {@code IMAGE_WORKER_PARK_AFTER} of its records are
 * polled and not yet taken, or taken and waiting (for their turn, or their window before it), it is paused on the
 * parked topic's consumer, and resumed once fewer than half that many are (as each of its records' turn comes,
 * {@link #admitted}, and looked at every {@link #RECHECK}, on a Vert.x timer: with looks alone, a lone producer's parked backlog went
 * through at a few records a look, 42 requests a second where calls of 100 ms in 16 slots took 160). A producer's parked backlog
 * (in a partition of its own while there are enough, {@link ParkedPartitions}) stays in Kafka beyond its share, and
 * the other partitions' records come in with their next fetch. The parked topic's consumer does no pausing of its own
 * ({@code pause-if-no-requests=false}: SmallRye's pauses and resumes every partition at once, and undid the holds), so
 * these holds are also what bounds its queue: of each partition, at most a share of records or {@link #QUEUED_BYTES}
 * of their bytes, and a poll (of 2 records), whichever comes first (the queue is outside the read-ahead's byte bound;
 * records of a few MB, edits with images inline, are held by their bytes).
 * Polled records are counted as the consumer returns them ({@link ParkedPolls}); the counts of a partition start
 * again when it is given up (SmallRye drops the queued records of revoked partitions, and only those).
 *
 * <p>A count off by some all the same (a drop not seen) must not hold a partition for ever: a held partition with
 * none of its records waiting that gave none for {@link #STALE} has its count started again, but only while no
 * record of the parked stream waits for room before the lane ({@link #left}: taken from the connector's queue, not
 * yet into the lane, at the read-ahead's byte bound or the stream's width). While one does, the stream is stalled,
 * the partition's records really are queued, and starting its count would let another share into the connector's
 * queue every {@link #STALE}, past every bound, for as long as the stall lasts (minutes, at the gateway's call
 * lengths).
 */
@Startup // its gauge is exported from the start, parking on or off
@ApplicationScoped
public class ParkedHolds {

    /** How often held partitions are looked at besides each record's turn ({@link #admitted}). */
    static final Duration RECHECK = Duration.ofMillis(100);

    /**
     * A held partition with nothing waiting and nothing taken for this long, while the parked stream is not stalled,
     * has its counts started again.
     */
    static final Duration STALE = Duration.ofSeconds(5);

    /** Pauses and resumes partitions of the parked topic's consumer. */
    interface Partitions {
        void pause(Set<TopicPartition> partitions);

        void resume(Set<TopicPartition> partitions);
    }

    /**
     * A partition with this many bytes of records polled and not yet taken is held too, whatever their count: a share
     * of records can be large (edits with images inline, about 1.3 MB each), and records queued in the connector are
     * outside the read-ahead's byte bound. About one fetch of a partition ({@code max.partition.fetch.bytes}).
     */
    static final long QUEUED_BYTES = 256 * 1024;

    /** What was polled and taken of one partition (records and their bytes), and when it was last taken from. */
    private static final class Counts {
        final LongAdder polled = new LongAdder();
        final LongAdder taken = new LongAdder();
        final LongAdder polledBytes = new LongAdder();
        final LongAdder takenBytes = new LongAdder();
        volatile long lastTaken;

        Counts(long now) {
            lastTaken = now;
        }

        long queued() {
            return Math.max(0, polled.sum() - taken.sum());
        }

        long queuedBytes() {
            return Math.max(0, polledBytes.sum() - takenBytes.sum());
        }
    }

    private final Map<TopicPartition, Counts> counts = new ConcurrentHashMap<>();
    private final Set<TopicPartition> held = ConcurrentHashMap.newKeySet();
    /** Records of the parked stream taken from the connector's queue, and those of them taken into the lane. */
    private final LongAdder left = new LongAdder();

    private final LongAdder leftTaken = new LongAdder();
    private final ToIntFunction<TopicPartition> waiting;
    private final int share;
    private final int resumeBelow;
    private final Partitions partitions;
    private final BooleanSupplier draining;
    private final LongSupplier nanos;
    private Vertx vertx;
    /** The Vert.x timer of the looks every {@link #RECHECK}, while the parked topic is read; -1 otherwise. */
    private long rechecks = -1;

    @Inject
    ParkedHolds(
            WorkerConfig config,
            PartitionWork work,
            KafkaClientService kafkaClients,
            RequestParking parking,
            Shutdown shutdown,
            MeterRegistry registry,
            Vertx vertx) {
        this(
                work::waitingOn,
                config.parkAfterLimit(),
                new SmallRyePartitions(kafkaClients),
                () -> !shutdown.callsAllowed(),
                System::nanoTime);
        work.whenReleased(this::released);
        work.whenAdmitted(this::admitted);
        if (parking.reads()) {
            recheckEvery(vertx);
        }
        WorkerMetrics.gauge(
                        "image_worker_parked_partitions_held",
                        this,
                        holds -> holds.held.size(),
                        "Partitions of the parked topic paused because their share of records is polled or waits")
                .register(registry);
    }

    /**
     * @param waiting the records of a partition waiting for their turn (or their window) now
     * @param share from how many records polled or waiting a partition is held
     * @param draining whether the worker drains: nothing is resumed then
     */
    ParkedHolds(
            ToIntFunction<TopicPartition> waiting,
            int share,
            Partitions partitions,
            BooleanSupplier draining,
            LongSupplier nanos) {
        this.waiting = waiting;
        this.share = Math.max(1, share);
        this.resumeBelow = Math.max(1, this.share / 2);
        this.partitions = partitions;
        this.draining = draining;
        this.nanos = nanos;
    }

    /** Records the parked topic's consumer returned from a poll ({@link ParkedPolls}, on its polling thread). */
    void polled(ConsumerRecords<?, ?> records) {
        for (TopicPartition partition : records.partitions()) {
            Counts of = counts(partition);
            long bytes = 0;
            for (ConsumerRecord<?, ?> record : records.records(partition)) {
                bytes += Math.max(0, record.serializedValueSize());
            }
            of.polled.add(records.records(partition).size());
            of.polledBytes.add(bytes);
            holdIfFull(partition);
        }
    }

    /**
     * A record of the parked topic left the connector's queue, for the read-ahead's byte bound and the stream's width
     * before the lane ({@code messaging.intake.Lanes}).
     */
    public void left() {
        left.increment();
    }

    /** A record of the parked topic's {@code partition}, of {@code bytes} bytes, is taken into the lane. */
    public void taken(TopicPartition partition, long bytes) {
        leftTaken.increment();
        Counts of = counts(partition);
        of.taken.increment();
        of.takenBytes.add(bytes);
        of.lastTaken = nanos.getAsLong();
        holdIfFull(partition);
    }

    /**
     * A record of {@code partition} stopped waiting for its turn: a held partition with fewer than half its share
     * outstanding now goes on at once, not at the next look ({@link #RECHECK}: a look every 100 ms let a lone producer's
     * parked backlog through at a few records a look, 42 requests a second where its calls took 160).
     */
    void admitted(TopicPartition partition) {
        if (!held.contains(partition) || draining.getAsBoolean()) {
            return;
        }
        synchronized (this) {
            if (mayResume(partition) && held.remove(partition)) {
                resume(Set.of(partition));
            }
        }
    }

    /** Partitions given up: what was polled of them is dropped, and their counts start again. */
    synchronized void released(Collection<TopicPartition> given) {
        given.forEach(counts::remove);
        held.removeAll(given);
    }

    private Counts counts(TopicPartition partition) {
        return counts.computeIfAbsent(partition, ignored -> new Counts(nanos.getAsLong()));
    }

    /** Its share of records outstanding, or a fetch's worth of bytes queued in the connector. */
    private boolean full(TopicPartition partition) {
        Counts of = counts.get(partition);
        return outstanding(partition) >= share || (of != null && of.queuedBytes() >= QUEUED_BYTES);
    }

    /** Fewer than half its share outstanding, and less than half a fetch's worth of bytes queued. */
    private boolean mayResume(TopicPartition partition) {
        Counts of = counts.get(partition);
        return outstanding(partition) < resumeBelow && (of == null || of.queuedBytes() < QUEUED_BYTES / 2);
    }

    private int outstanding(TopicPartition partition) {
        Counts of = counts.get(partition);
        return waiting.applyAsInt(partition) + (of == null ? 0 : (int) Math.min(Integer.MAX_VALUE, of.queued()));
    }

    /**
     * Holds {@code partition} once its share is outstanding. Holds and resumes are decided under this object's lock
     * and handed to the polling thread in that order, so the consumer ends paused exactly when the partition is held.
     */
    private void holdIfFull(TopicPartition partition) {
        if (!full(partition)) {
            return;
        }
        synchronized (this) {
            if (full(partition)) {
                if (held.add(partition)) {
                    Log.debugf("Holding parked partition %s: its share of records is polled or waits", partition);
                }
                partitions.pause(Set.of(partition));
            }
        }
    }

    private void resume(Set<TopicPartition> these) {
        try {
            partitions.resume(these);
        } catch (RuntimeException e) {
            held.addAll(these);
            Log.debugf("Resuming parked partitions %s failed (%s); the next look tries again", these, e);
        }
    }

    /**
     * Resumes the held partitions with fewer than half their share outstanding. A held partition with nothing waiting that
     * gave no record for {@link #STALE} while the parked stream is not stalled has its count of polled records dropped
     * first (a count off by some), so that it is resumed.
     */
    void recheck() {
        if (held.isEmpty() || draining.getAsBoolean()) {
            return;
        }
        long now = nanos.getAsLong();
        boolean stalled = left.sum() > leftTaken.sum();
        synchronized (this) {
            Set<TopicPartition> resume = new HashSet<>();
            for (TopicPartition partition : held) {
                Counts of = counts.get(partition);
                if (of != null
                        && !stalled
                        && waiting.applyAsInt(partition) == 0
                        && now - of.lastTaken > STALE.toNanos()
                        && of.queued() > 0) {
                    Log.debugf(
                            "Parked partition %s gave nothing for %s with nothing waiting: its count starts again",
                            partition, STALE);
                    counts.remove(partition);
                }
                if (mayResume(partition)) {
                    resume.add(partition);
                }
            }
            held.removeAll(resume);
            if (!resume.isEmpty()) {
                resume(resume);
            }
        }
    }

    /**
     * Looks at the held partitions every {@link #RECHECK} on {@code vertx}'s timers. A look runs on an event loop: it
     * takes this object's lock and the offsets' ({@code waitingOn}) for a count each, and hands resumes to the polling
     * thread ({@code runOnPollingThread}) without waiting for them: no I/O, nothing that blocks for longer than those
     * locks are held.
     */
    void recheckEvery(Vertx vertx) {
        this.vertx = vertx;
        this.rechecks = vertx.setPeriodic(RECHECK.toMillis(), RECHECK.toMillis(), id -> recheck());
    }

    /** The partitions held now. */
    Set<TopicPartition> held() {
        return Set.copyOf(held);
    }

    @PreDestroy
    void close() {
        if (rechecks >= 0) {
            vertx.cancelTimer(rechecks);
            rechecks = -1;
        }
    }

    /**
     * The parked topic's consumer, on its polling thread: only partitions it is assigned now are paused or resumed (one
     * given to another worker meanwhile is no longer this worker's to hold).
     */
    private static final class SmallRyePartitions implements Partitions {
        private final KafkaClientService kafkaClients;

        SmallRyePartitions(KafkaClientService kafkaClients) {
            this.kafkaClients = kafkaClients;
        }

        @Override
        public void pause(Set<TopicPartition> partitions) {
            onPollingThread(partitions, true);
        }

        @Override
        public void resume(Set<TopicPartition> partitions) {
            onPollingThread(partitions, false);
        }

        private void onPollingThread(Set<TopicPartition> partitions, boolean pause) {
            KafkaConsumer<Object, Object> consumer = kafkaClients.getConsumer(RequestParking.CHANNEL);
            if (consumer == null) {
                return;
            }
            consumer.runOnPollingThread(client -> {
                        Set<TopicPartition> assigned = new HashSet<>(partitions);
                        assigned.retainAll(client.assignment());
                        if (assigned.isEmpty()) {
                            return;
                        }
                        if (pause) {
                            client.pause(assigned);
                        } else {
                            client.resume(assigned);
                        }
                    })
                    .subscribe()
                    .with(
                            ignored -> {},
                            failure -> Log.debugf(
                                    "Could not %s parked partitions %s: %s",
                                    pause ? "pause" : "resume", partitions, failure.toString()));
        }
    }
}
