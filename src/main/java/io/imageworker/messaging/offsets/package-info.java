/**
 * The offsets of the request topics: which requests are in progress on which partition, what each partition may be
 * committed to, and what a rebalance or a shutdown does with the requests still running. {@link
 * io.imageworker.messaging.offsets.InFlight} is the door the intake goes through: every record taken starts there (it
 * runs, or is left to the next consumer, or was finished by the partition's last owner) and ends there; it alone starts
 * and ends the records that run in the registry of what is in progress ({@code progress.RequestsInProgress}), and
 * holds the graceful drain. {@link io.imageworker.messaging.offsets.PartitionWork} tracks the
 * requests of each partition and the offset it may be committed to, telling apart the copies of a record Kafka
 * delivers again ({@link io.imageworker.messaging.offsets.RecordCopy}); every commit carries the records finished
 * above its offset ({@link io.imageworker.messaging.offsets.FinishedAbove}), the commit strategy's too ({@link
 * io.imageworker.messaging.offsets.FinishedAboveCommits}). {@link io.imageworker.messaging.offsets.PauseAwareCommit}
 * is SmallRye's throttled strategy told which records wait by design, and {@link
 * io.imageworker.messaging.offsets.RevocationGrace} lets the requests on partitions taken away finish and commit
 * before they go, through whoever commits the offsets ({@link io.imageworker.messaging.offsets.OffsetCommits}: the
 * results' transactions, or the consumer, {@link io.imageworker.messaging.offsets.ConsumerCommits}), as the result sink
 * chosen at start-up ({@code messaging.results.ResultSink}, which implements it) says. A record's end comes from that
 * sink alone.
 *
 * <p>It may use {@code progress}, {@code support}, {@code config} and Kafka's and SmallRye's types, nothing else of the
 * worker; only the request topics' packages of {@code messaging} (the consumer, its parking, results and intake) may
 * use it ({@code ArchitectureTest}).
 */
package io.imageworker.messaging.offsets;
