package io.imageworker.messaging.offsets;

import io.imageworker.config.WorkerConfig;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Which requests are in progress on which partition, and the offset each partition may be committed to: the first
 * offset this worker started and has not finished with an acknowledgement, or the one after the last it acknowledged.
 * A rebalance uses it ({@link RevocationGrace}) to let the requests on the partitions taken away finish and commit
 * within a grace, and to leave the records of those partitions that are still on their way to the new owner.
 *
 * <p>Records of one partition reach the worker in offset order, so every offset below the last one started was
 * started too: the committable offset never skips a record that was not acknowledged. Records are taken no further
 * than {@link FinishedAbove#WINDOW} above the committable offset ({@link #within}), so that the records finished above
 * it always fit in the commit's metadata. Every method is short and synchronized; only {@link #release} waits, on
 * Kafka's polling thread, never on an event loop.
 *
 * <p>Why one class of over 400 lines: the facts it keeps (what started and ended on each partition, what is revoked,
 * which records wait at a window's gate, whether a commit may be made) change together under one lock, and every
 * method answers from more than one of them: a record's end can open gates and settle a revocation's wait, a commit
 * reads the window and the revocations. The parts that need no lock of their own already live apart ({@link
 * PartitionRequests} per partition, {@link WindowGates}, {@link Released}, {@link FinishedAbove}); splitting the rest
 * would split that lock, and the order in which two locks are taken would become the thing to get right.
 */
@ApplicationScoped
public class PartitionWork {

    private final Map<TopicPartition, PartitionRequests> partitions = new HashMap<>();
    private final Set<TopicPartition> revoked = new HashSet<>();
    private final Map<TopicPartition, NavigableSet<Long>> finishedBefore = new HashMap<>();
    /** Records waiting for their partition's window to reach them ({@link #within}). */
    private final WindowGates gates = new WindowGates();
    /** Told the partitions each {@link #release} takes away, as it takes them. */
    private final List<Consumer<Collection<TopicPartition>>> releaseListeners = new CopyOnWriteArrayList<>();

    private final List<Consumer<TopicPartition>> admitListeners = new CopyOnWriteArrayList<>();
    /** Set by {@link #uncommittable()} during a {@link #release}'s wait. */
    private boolean uncommittable;
    /** How far above its partition's first pending record a record may go into progress ({@link #within}). */
    private final int window;

    /**
     * The bookkeeping of the partitions held. The requests in progress are counted once, by {@link InFlight#count}
     * (the gauge {@code image_worker_requests_in_progress}); here only those of given partitions are ({@link
     * #running}), for a revocation.
     */
    public PartitionWork() {
        this(FinishedAbove.WINDOW);
    }

    /** The same, whose records go into progress within {@code window} of their partition's first pending one. */
    PartitionWork(int window) {
        this.window = Math.max(1, Math.min(window, FinishedAbove.WINDOW));
    }

    /** The same, its window {@code IMAGE_WORKER_OFFSET_WINDOW} (at most {@link FinishedAbove#WINDOW}). */
    @Inject
    public PartitionWork(WorkerConfig config) {
        this(config.offsetWindow().orElse(FinishedAbove.WINDOW));
    }

    /**
     * Partitions given to this worker: their records are taken again, except those their last owner finished above
     * the offset it committed ({@link FinishedAbove}, in the commit's metadata).
     *
     * @param committed the committed offset of each partition assigned that has one
     */
    public synchronized void assigned(
            Collection<TopicPartition> assigned, Map<TopicPartition, OffsetAndMetadata> committed) {
        revoked.removeAll(assigned);
        for (TopicPartition partition : assigned) {
            OffsetAndMetadata commit = committed.get(partition);
            NavigableSet<Long> finished =
                    commit == null ? new TreeSet<>() : FinishedAbove.decode(commit.offset(), commit.metadata());
            if (finished.isEmpty()) {
                finishedBefore.remove(partition);
            } else {
                finishedBefore.put(partition, finished);
            }
        }
    }

    /** What becomes of a record taken from the request topic. */
    public enum Start {
        /** Its request runs: {@link #ended} follows. */
        RUN,
        /** Its partition was taken away while it was on its way: it is left, unacknowledged, to the new owner. */
        LEFT,
        /** The partition's last owner finished it: it is acknowledged without being done again. */
        DONE
    }

    /**
     * A record's request starts, unless its partition was taken away by a rebalance while the record was on its way
     * (it is left to the new owner) or the partition's last owner finished it already (it is acknowledged as it is).
     */
    public synchronized Start started(RecordCopy record) {
        TopicPartition partition = new TopicPartition(record.topic(), record.partition());
        if (!takes(partition)) {
            return Start.LEFT;
        }
        PartitionRequests progress = partitions.computeIfAbsent(partition, ignored -> new PartitionRequests());
        NavigableSet<Long> before = finishedBefore.get(partition);
        if (before != null && before.remove(record.offset())) {
            if (before.isEmpty()) {
                finishedBefore.remove(partition);
            }
            progress.acknowledged(record.offset());
            return Start.DONE;
        }
        progress.running.put(record.offset(), record);
        return Start.RUN;
    }

    /**
     * Completes once {@code record} may go into progress: it lies less than {@link FinishedAbove#WINDOW} above the
     * first record of its partition taken and not acknowledged (itself, or one below it), or its partition is being
     * taken away (its turn then finds it left to the new owner). Whatever this worker finishes above a commit then fits
     * in the commit's metadata, however far requests finish out of order (the read-ahead, a producer held by its cap),
     * and the partition's next owner does none of it again. A record waiting here is read ahead like one waiting for its
     * turn: it holds its place in the read-ahead and its bytes, not the records of other partitions behind it.
     */
    public Uni<Void> within(RecordCopy record) {
        TopicPartition partition = new TopicPartition(record.topic(), record.partition());
        return Uni.createFrom().emitter(emitter -> {
            synchronized (this) {
                if (!fits(partition, record.offset())) {
                    gates.close(partition, record.offset(), emitter);
                    emitter.onTermination(() -> closeGate(partition, record.offset(), emitter));
                    return;
                }
            }
            emitter.complete(null);
        });
    }

    private boolean fits(TopicPartition partition, long offset) {
        PartitionRequests progress = partitions.get(partition);
        if (progress == null || !takes(partition)) {
            return true;
        }
        long pending = progress.firstPending();
        return pending < 0 || offset - pending < window;
    }

    /**
     * Whether {@code record} lies within its partition's window now ({@link #within} would let it go at once): a record
     * beyond it may be parked instead of waiting ({@code messaging.intake.ReadAhead}).
     */
    public synchronized boolean fitsNow(RecordCopy record) {
        return fits(new TopicPartition(record.topic(), record.partition()), record.offset());
    }

    private synchronized void closeGate(TopicPartition partition, long offset, UniEmitter<? super Void> emitter) {
        gates.remove(partition, offset, emitter);
    }

    /** Lets the records of {@code these} partitions go that now fit their window ({@link #within}), outside the lock. */
    private void openGates(Collection<TopicPartition> these) {
        List<UniEmitter<? super Void>> open = new ArrayList<>();
        synchronized (this) {
            for (TopicPartition partition : these) {
                open.addAll(gates.open(partition, offset -> fits(partition, offset)));
            }
        }
        open.forEach(emitter -> emitter.complete(null));
    }

    /**
     * A record started waits for its turn to go into progress ({@code messaging.intake.ReadAhead}): a revocation does not wait for it, but
     * the committed offset still never passes it.
     */
    synchronized void waiting(RecordCopy record) {
        PartitionRequests progress = partitions.get(new TopicPartition(record.topic(), record.partition()));
        if (progress != null && progress.running.get(record.offset()) == record) {
            progress.waiting.add(record.offset());
        }
    }

    /**
     * A record that waited for its turn goes into progress (or ends): a revocation waits for it again. Not when its
     * partition is being taken away: then it does not start ({@link #mayStart}), and it stays among those left to the
     * new owner.
     */
    void admitted(RecordCopy record) {
        TopicPartition partition = new TopicPartition(record.topic(), record.partition());
        synchronized (this) {
            PartitionRequests progress = partitions.get(partition);
            if (progress != null && progress.running.get(record.offset()) == record && takes(partition)) {
                progress.waiting.remove(record.offset());
            }
        }
        admitListeners.forEach(listener -> listener.accept(partition));
    }

    /**
     * The metadata of a commit of {@code partition} at {@code offset} ({@link FinishedAbove}): the records finished
     * above it, here or by the partition's last owner and not yet seen again here. Every commit carries it, not only
     * the one at a hand-off, so that an owner that crashes loses none of what it inherited or finished.
     */
    synchronized String finishedAbove(TopicPartition partition, long offset) {
        return finishedAbove(partition, offset, partitions.get(partition));
    }

    private String finishedAbove(TopicPartition partition, long offset, PartitionRequests progress) {
        NavigableSet<Long> finished = new TreeSet<>();
        if (progress != null) {
            finished.addAll(progress.finished.tailSet(offset, false));
        }
        NavigableSet<Long> inherited = finishedBefore.get(partition);
        if (inherited != null) {
            finished.addAll(inherited.tailSet(offset, false));
        }
        return FinishedAbove.encode(offset, finished);
    }

    /**
     * What the partitions of {@code topic} this worker holds may be committed to once the requests of {@code ending}
     * are acknowledged, with the finished-above metadata of each commit; nothing changes here until {@link #ended} is
     * told. A transaction commits these offsets with those requests' results ({@code
     * messaging.results.ResultTransactions}), so that a record is never committed before its result is visible, nor its
     * result visible without the commit.
     */
    public synchronized Map<TopicPartition, OffsetAndMetadata> commitsIf(
            String topic, Collection<? extends RecordCopy> ending) {
        Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
        partitions.forEach((partition, progress) -> {
            if (!partition.topic().equals(topic)) {
                return;
            }
            PartitionRequests after = progress.copy();
            for (RecordCopy record : ending) {
                if (record.partition() == partition.partition()
                        && record.topic().equals(topic)
                        && after.removeRunning(record)) {
                    after.acknowledged(record.offset());
                }
            }
            after.committable()
                    .ifPresent(offset -> commits.put(
                            partition, new OffsetAndMetadata(offset, finishedAbove(partition, offset, after))));
        });
        return commits;
    }

    /**
     * A record's request ended.
     *
     * @param acknowledged whether its result was published and the record acknowledged; if not (abandoned at
     *     shutdown, failed), the partition is never committed past it
     */
    public void ended(RecordCopy record, boolean acknowledged) {
        end(record, acknowledged);
        openGates(List.of(new TopicPartition(record.topic(), record.partition())));
    }

    private synchronized void end(RecordCopy record, boolean acknowledged) {
        TopicPartition partition = new TopicPartition(record.topic(), record.partition());
        PartitionRequests progress = partitions.get(partition);
        boolean waited = progress != null
                && (progress.waiting.contains(record.offset())
                        || !acknowledged && progress.parked.contains(record.offset()));
        if (progress == null || !progress.removeRunning(record)) {
            // Given up already: its partition's new owner commits it, even when that is this worker again (the
            // record taken again is another copy, with its own end).
            return;
        }
        if (waited && !takes(partition)) {
            // Its turn, or its first call, came while its partition was being taken away: left to the new owner,
            // no call made for it here.
            progress.handedOver++;
        }
        if (acknowledged) {
            progress.acknowledged(record.offset());
        } else {
            progress.unacknowledged.add(record.offset());
        }
        notifyAll();
    }

    /**
     * Whether this copy of a record still runs here: from {@link #started} until it {@link #ended}, or its partition
     * was released (a revoked partition is held while its requests in progress finish within the grace). A copy given
     * up does not run here any more even when the partition comes back to this worker: its record is taken again from
     * the committed offset, and only that new copy may publish and commit (a lost partition's requests go on running
     * unawaited, and two copies of one request must not both end in a result).
     */
    public synchronized boolean runs(RecordCopy record) {
        PartitionRequests progress = partitions.get(new TopicPartition(record.topic(), record.partition()));
        return progress != null && progress.running.get(record.offset()) == record;
    }

    /**
     * Whether this copy of a record, taken earlier, may still go into progress: it {@link #runs} and its partition is
     * not being taken away (a record whose turn comes during a revocation's grace is left to the new owner, not called
     * for while the grace waits).
     */
    public synchronized boolean mayStart(RecordCopy record) {
        return takes(new TopicPartition(record.topic(), record.partition())) && runs(record);
    }

    /** Whether records of this partition are taken: false from its revocation until it is assigned again. */
    public synchronized boolean takes(TopicPartition partition) {
        return !revoked.contains(partition);
    }

    /**
     * A commit of results was refused because the group no longer knows this worker as a member of its generation (a
     * session that expired during a broker restart, say): a revocation in progress waits no longer, since no result of
     * its requests can be committed until the next rebalance, which cannot come while the revocation blocks the poll.
     */
    public synchronized void uncommittable() {
        uncommittable = true;
        notifyAll();
    }

    /** Records of {@code partition} waiting for their turn now, or for their window before it ({@link #waiting}). */
    public synchronized int waitingOn(TopicPartition partition) {
        PartitionRequests progress = partitions.get(partition);
        return progress == null ? 0 : progress.waiting.size();
    }

    /** Requests in progress on these partitions now. */
    synchronized int running(Collection<TopicPartition> these) {
        return these.stream()
                .map(partitions::get)
                .filter(progress -> progress != null)
                .mapToInt(progress -> progress.running.size())
                .sum();
    }

    /**
     * Requests in progress on these partitions now that a revocation waits for: not those still waiting for their
     * turn, nor those waiting to make their first gateway call ({@link #waitsToCall}), which make none once their
     * partition is being taken away.
     */
    private int working(Collection<TopicPartition> these) {
        return these.stream()
                .map(partitions::get)
                .filter(progress -> progress != null)
                .mapToInt(PartitionRequests::working)
                .sum();
    }

    /**
     * Request {@code record} waits for a chance to make a gateway call (a call slot, a pause on a gateway fault, the
     * spend guard, a back-off): whether it may still make one here. Not once its partition is being taken away, or
     * was: it then ends without a call, and its record goes to the partition's new owner. A request that has not made
     * a call yet is not waited for by a revocation while it waits so ({@link #release}): it would make no call, and
     * waiting for its slot could take calls' lengths.
     */
    public synchronized boolean waitsToCall(RecordCopy record) {
        TopicPartition partition = new TopicPartition(record.topic(), record.partition());
        if (!takes(partition) || !runs(record)) {
            return false;
        }
        PartitionRequests progress = partitions.get(partition);
        if (!progress.called.contains(record.offset())) {
            progress.parked.add(record.offset());
            notifyAll();
        }
        return true;
    }

    /**
     * A gateway call of request {@code record} is about to leave: whether it may. Not once its partition is being
     * taken away, or was (the call would be cut off at the hand-off, or made twice); from a yes on, a revocation waits
     * for the request to end, within the grace.
     */
    public synchronized boolean callLeaves(RecordCopy record) {
        TopicPartition partition = new TopicPartition(record.topic(), record.partition());
        if (!takes(partition) || !runs(record)) {
            return false;
        }
        PartitionRequests progress = partitions.get(partition);
        progress.parked.remove(record.offset());
        progress.called.add(record.offset());
        return true;
    }

    /**
     * {@code listener} is told the partitions each rebalance takes from this worker, as it takes them (before the
     * grace): what holds records of theirs waiting for their turn lets them go at once, not at their turn.
     */
    public void whenReleased(Consumer<Collection<TopicPartition>> listener) {
        releaseListeners.add(listener);
    }

    /**
     * {@code listener} is told the partition of each record that stops waiting for its turn (it goes into progress, or
     * ends), outside this object's lock: what holds a partition at a count of waiting records can let it go on at once.
     */
    public void whenAdmitted(Consumer<TopicPartition> listener) {
        admitListeners.add(listener);
    }

    /**
     * Takes these partitions away: from now on their records are left to the new owner; waits at most {@code grace}
     * for their requests in progress to end (not for records still waiting for their turn: those go to the new owner at
     * once); then forgets them.
     *
     * @return what may be committed for them, how many requests finished during the wait and were given up, and how
     *     many records still waiting for their turn were left to the new owner
     */
    Released release(Collection<TopicPartition> taken, Duration grace) throws InterruptedException {
        int before;
        synchronized (this) {
            // Counted as the partitions stop being taken: a record whose turn comes from now on is handed over, and
            // it was running here (counted after the gates open, it made the count of those finished negative).
            before = running(taken);
            revoked.addAll(taken);
        }
        openGates(taken);
        releaseListeners.forEach(listener -> listener.accept(taken));
        return awaitRelease(taken, grace, before);
    }

    /** @param before the requests running on {@code taken} when the release began */
    private synchronized Released awaitRelease(Collection<TopicPartition> taken, Duration grace, int before)
            throws InterruptedException {
        long deadline = System.nanoTime() + grace.toNanos();
        long remaining;
        uncommittable = false;
        while (working(taken) > 0 && !uncommittable && (remaining = deadline - System.nanoTime()) > 0) {
            wait(Math.max(1, remaining / 1_000_000));
        }
        if (uncommittable) {
            Log.warnf(
                    "Rebalance: the group refuses this worker's commits (it is no longer a member, or not of this"
                            + " generation); not waiting for the %d request(s) in progress on %s",
                    running(taken), taken);
        }
        int left = running(taken);
        int givenUp = working(taken);
        int handedOver = left - givenUp;
        Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
        for (TopicPartition partition : taken) {
            PartitionRequests progress = partitions.remove(partition);
            NavigableSet<Long> inherited = finishedBefore.remove(partition);
            if (progress != null) {
                handedOver += progress.handedOver;
                progress.committable().ifPresent(offset -> {
                    NavigableSet<Long> finished = new TreeSet<>(progress.finished);
                    if (inherited != null) {
                        finished.addAll(inherited);
                    }
                    commits.put(partition, new OffsetAndMetadata(offset, FinishedAbove.encode(offset, finished)));
                });
            }
        }
        return new Released(commits, before - givenUp - handedOver, givenUp, handedOver, uncommittable);
    }
}
