package io.imageworker.messaging.offsets;

import io.imageworker.config.WorkerConfig;
import io.imageworker.gateway.GatewaySettings;
import io.imageworker.progress.RequestEvents;
import io.imageworker.support.RetrySettings;
import io.quarkus.logging.Log;
import io.quarkus.runtime.ShutdownEvent;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.kafka.KafkaConsumerRebalanceListener;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The request channel's rebalance listener ({@code consumer-rebalance-listener.name}): when a rebalance takes
 * partitions away from this worker, the requests on them that made a gateway call get {@code
 * IMAGE_WORKER_REBALANCE_GRACE} (by default a whole call plus the infrastructure patience) to finish and publish, and
 * what they acknowledged is committed before the partitions go, so that their new owner does not do them again. A
 * request that has made no call yet makes none here from then on ({@link PartitionWork#callLeaves}) and is not waited
 * for: its record goes to the new owner at once, which makes its call once. So a scale-out, a scale-in or a rollout
 * pays for no call twice, however long the calls, as long as they end within the gateway timeout.
 *
 * <p>SmallRye's throttled commit strategy, on its own, commits a revoked partition up to what is acknowledged at that
 * moment and ignores every later acknowledgement: a request still in progress there is done again, and its event
 * published again, by the new owner. SmallRye calls this listener after that commit, on Kafka's polling thread, where
 * waiting blocks no event loop and the partitions still belong to this worker until it returns; it commits again, up
 * to what was acknowledged during the wait. Requests still running when the grace ends are given up: their records go
 * to the new owner (at least once). The requests that finished above the offset committed are named in the commit's
 * metadata ({@link FinishedAbove}); on assignment this listener reads them back, and the new owner acknowledges those
 * records without doing them again.
 *
 * <p>With the cooperative-sticky assignor only the partitions that move are revoked; at shutdown every partition is,
 * after the shutdown grace already waited for the requests in progress, so it does not wait again. Partitions lost
 * (this worker was fenced out of the group: another owns them already) are neither waited for nor committed.
 *
 * <p>After each assignment and revocation it tells the status read model ({@link RequestEvents#partitions}) how many partitions of each request
 * topic this worker owns, and how many the topic has: what a status query answering {@code unknown} says of the other
 * replicas.
 */
@ApplicationScoped
@Identifier(RevocationGrace.NAME)
class RevocationGrace implements KafkaConsumerRebalanceListener {

    /** Its name in {@code mp.messaging.incoming.requests.consumer-rebalance-listener.name}. */
    static final String NAME = "image-worker-rebalance";

    private static final Duration COMMITTED_TIMEOUT = Duration.ofSeconds(10);
    private static final int COMMITTED_ATTEMPTS = 4;

    /** How long the count of a topic's partitions is waited for, after a rebalance (it is in the client's metadata). */
    private static final Duration PARTITIONS_TIMEOUT = Duration.ofSeconds(2);

    private final PartitionWork work;
    private final OffsetCommits commits;
    private final RequestEvents events;
    private final Duration grace;
    private volatile boolean shuttingDown;

    RevocationGrace(
            PartitionWork work,
            OffsetCommits commits,
            RequestEvents events,
            WorkerConfig config,
            GatewaySettings gateway,
            RetrySettings retry) {
        this.work = work;
        this.commits = commits;
        this.events = events;
        this.grace = config.rebalanceWait(gateway.timeout(), retry.infrastructurePatience());
    }

    /**
     * From the start of a shutdown, revocations wait no more: the shutdown grace bounds the wait for the requests in
     * progress ({@code messaging.RequestConsumer.drain}, priority 1, through {@link InFlight#drain}), and the consumer
     * is closed, which revokes every partition, from within that observer once the grace is over, with only abandoned
     * requests left.
     */
    void shuttingDown(@Observes @Priority(0) ShutdownEvent event) {
        shuttingDown = true;
    }

    @Override
    public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        commits.rebalanced(consumer);
        tellOwned(consumer, Set.of());
        if (partitions.isEmpty()) {
            work.assigned(partitions, Map.of());
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> committed = committed(consumer, partitions);
        work.assigned(partitions, committed);
        Log.infof("Rebalance: %d partition(s) assigned: %s, committed %s", partitions.size(), partitions, committed);
    }

    /**
     * The committed offsets of the partitions assigned, with what their last owner finished above them: without them
     * (Kafka did not answer in time) nothing is skipped, and those requests are found in the ledger and published
     * again.
     */
    private static Map<TopicPartition, OffsetAndMetadata> committed(
            Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        // A transaction a killed owner left open holds its offsets unstable until the broker aborts it
        // (IMAGE_WORKER_TRANSACTIONS_TIMEOUT): Kafka answers the read only then, so it is tried for longer than that.
        for (int attempt = 1; ; attempt++) {
            try {
                Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
                consumer.committed(new HashSet<>(partitions), COMMITTED_TIMEOUT).forEach((partition, offset) -> {
                    if (offset != null) {
                        committed.put(partition, offset);
                    }
                });
                return committed;
            } catch (KafkaException e) {
                if (attempt < COMMITTED_ATTEMPTS) {
                    Log.infof(
                            "Rebalance: the committed offsets of %s are not readable yet (%s); reading again",
                            partitions, e.toString());
                    continue;
                }
                Log.warnf(
                        "Rebalance: could not read the committed offsets of %s (%s); what their last owner finished"
                                + " beyond them is done again",
                        partitions, e.toString());
                return Map.of();
            }
        }
    }

    @Override
    public void onPartitionsRevoked(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        // Cooperative rebalancing revokes after the group moved to its new generation: the requests finishing during
        // the grace commit under it.
        commits.rebalanced(consumer);
        tellOwned(consumer, new HashSet<>(partitions));
        if (partitions.isEmpty()) {
            return;
        }
        boolean lost = isFencedOut(consumer);
        Duration wait = lost || shuttingDown ? Duration.ZERO : grace;
        int running = work.running(partitions);
        Log.infof(
                "Rebalance: %d partition(s) revoked: %s; %d request(s) in progress on them, waiting up to %s for"
                        + " those with a gateway call made",
                partitions.size(), partitions, running, wait);
        Released release;
        try {
            release = work.release(partitions, wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (!lost && !release.uncommittable() && !release.commits().isEmpty()) {
            // In a transaction after the one in progress (never below an offset one committed with its results), or
            // by the consumer: as the result sink chosen at start-up commits the offsets.
            commits.commitReleased(consumer, release.commits(), COMMITTED_TIMEOUT);
        }
        if (release.givenUp() > 0) {
            Log.warnf(
                    "Rebalance: %d request(s) on the revoked partitions did not finish within %s; their records go to"
                            + " the new owner",
                    release.givenUp(), wait);
        }
        Log.infof(
                "Rebalance: released %s; %d request(s) finished during the wait, %d given up, %d with no call made"
                        + " left to the new owner, committed %s",
                partitions, release.finished(), release.givenUp(), release.handedOver(), release.commits());
    }

    /**
     * Tells the status queries how many partitions of each topic this consumer reads it owns now, less {@code
     * revoked}, and how many the topic has (-1 when the client cannot say in time): what an {@code unknown} answer
     * says of the other replicas.
     */
    private void tellOwned(Consumer<?, ?> consumer, Set<TopicPartition> revoked) {
        try {
            Set<TopicPartition> assignment = consumer.assignment();
            for (String topic : consumer.subscription()) {
                int owned = 0;
                for (TopicPartition partition : assignment) {
                    if (partition.topic().equals(topic) && !revoked.contains(partition)) {
                        owned++;
                    }
                }
                events.partitions(topic, owned, partitionsOf(consumer, topic));
            }
        } catch (RuntimeException e) {
            Log.debugf("Rebalance: could not count the partitions owned (%s)", e.toString());
        }
    }

    private static int partitionsOf(Consumer<?, ?> consumer, String topic) {
        try {
            List<PartitionInfo> partitions = consumer.partitionsFor(topic, PARTITIONS_TIMEOUT);
            return partitions == null ? -1 : partitions.size();
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** Whether this member lost its membership: its partitions are already another's, committing them fails. */
    private static boolean isFencedOut(Consumer<?, ?> consumer) {
        try {
            return consumer.groupMetadata().generationId() < 0;
        } catch (RuntimeException e) {
            return false;
        }
    }
}
