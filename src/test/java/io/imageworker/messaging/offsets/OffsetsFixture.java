package io.imageworker.messaging.offsets;

import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Pauses;
import io.imageworker.support.Shutdown;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;
import org.apache.kafka.common.TopicPartition;

/**
 * The offset bookkeeping of one worker, for the tests of {@code messaging} that take records through {@link InFlight}
 * (its types are package-private there): partitions held, the commit strategy on a clock the test moves.
 */
public final class OffsetsFixture {

    private final PartitionWork partitions = new PartitionWork();
    private final PauseAwareCommit commit;
    private final RequestsInProgress progress;
    private final InFlight inFlight;
    private final Shutdown shutdown = new Shutdown();

    public OffsetsFixture(LongSupplier clock) {
        Pauses pauses = new Pauses(clock);
        this.progress = new RequestsInProgress(pauses);
        this.commit = new PauseAwareCommit(null, pauses, progress, partitions, new ConsumerCommits());
        this.inFlight = new InFlight(partitions, progress, shutdown, new SimpleMeterRegistry());
    }

    /** The registry of the requests in progress that {@link #inFlight()} starts and ends them in. */
    public RequestsInProgress progress() {
        return progress;
    }

    /** The shutdown signal the in-flight records see: draining once {@link InFlight#drain} is called. */
    public Shutdown shutdown() {
        return shutdown;
    }

    /** The bookkeeping of the partitions held. */
    public PartitionWork partitions() {
        return partitions;
    }

    /** The door the intake takes records through. */
    public InFlight inFlight() {
        return inFlight;
    }

    /** Whether the commit strategy sees a record that waited for its turn within {@code maxAge}. */
    public boolean waitedWithin(Duration maxAge) {
        return commit.waitedWithin(maxAge);
    }

    /** A rebalance takes {@code partition} away, waiting for nothing. */
    public void revoke(TopicPartition partition) throws InterruptedException {
        revoke(partition, Duration.ZERO);
    }

    /** A rebalance takes {@code partition} away, waiting at most {@code grace} for its requests in progress. */
    public void revoke(TopicPartition partition, Duration grace) throws InterruptedException {
        partitions.release(List.of(partition), grace);
    }
}
