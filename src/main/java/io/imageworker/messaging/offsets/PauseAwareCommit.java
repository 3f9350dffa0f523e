package io.imageworker.messaging.offsets;

import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.Pauses;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.kafka.KafkaConnectorIncomingConfiguration;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import io.smallrye.reactive.messaging.kafka.commit.KafkaCommitHandler;
import io.smallrye.reactive.messaging.kafka.commit.KafkaThrottledLatestProcessedCommit;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.function.BiConsumer;

/**
 * SmallRye's throttled commit strategy, told which records wait by design. The strategy itself is SmallRye's, unchanged
 * (it commits the highest offset below which every record is acknowledged, every {@code auto.commit.interval.ms}); it
 * also reports a record unacknowledged for longer than {@code throttled.unprocessed-record-max-age.ms} as a fatal
 * failure, which closes the consumer and takes liveness down: the pod restarts. That is right for a stuck record and
 * wrong for one held by a pause ({@link Pauses}): a dead token or a spend guard waiting for its window may hold records
 * for hours, and a restart loses nothing but gains nothing either (it meets the same token, the same budget) while it
 * drops the requests in progress and makes the next worker read them again.
 *
 * <p>So the report goes through here. With no pause within the max age it is passed on as is. Otherwise it is passed
 * on only if a record in progress has waited longer than the max age <em>not counting the time the worker was
 * paused</em> while it waited ({@link RequestsInProgress} holds each record from the moment the request stream takes
 * it to its end, {@link InFlight} telling both). A truly stuck record is still reported: after the max age of time that was not a pause, or at the latest a
 * max age after the last pause ended. Set {@code commit-strategy=pause-aware} on the channel.
 *
 * <p>Its commits also carry what was finished above the offset committed ({@link FinishedAboveCommits}), every one of
 * them, not only the hand-off's.
 */
@ApplicationScoped
@Identifier(PauseAwareCommit.STRATEGY)
class PauseAwareCommit implements KafkaCommitHandler.Factory {

    /** The value of the channel's {@code commit-strategy}. */
    static final String STRATEGY = "pause-aware";

    private final KafkaCommitHandler.Factory throttled;
    private final Pauses pauses;
    private final PartitionWork work;
    private final OffsetCommits commits;
    /** The records in progress, each one's age counted there. */
    private final RequestsInProgress progress;

    PauseAwareCommit(
            @Identifier(KafkaCommitHandler.Strategy.THROTTLED) KafkaCommitHandler.Factory throttled,
            Pauses pauses,
            RequestsInProgress progress,
            PartitionWork work,
            OffsetCommits commits) {
        this.throttled = throttled;
        this.pauses = pauses;
        this.progress = progress;
        this.work = work;
        this.commits = commits;
    }

    @Override
    public KafkaCommitHandler create(
            KafkaConnectorIncomingConfiguration config,
            Vertx vertx,
            KafkaConsumer<?, ?> consumer,
            BiConsumer<Throwable, Boolean> reportFailure) {
        Duration maxAge = Duration.ofMillis(config.getThrottledUnprocessedRecordMaxAgeMs());
        return throttled.create(config, vertx, withFinishedAbove(consumer), (failure, fatal) -> {
            if (passesOn(failure, maxAge)) {
                reportFailure.accept(failure, fatal);
            }
        });
    }

    private <K, V> KafkaConsumer<K, V> withFinishedAbove(KafkaConsumer<K, V> consumer) {
        return new FinishedAboveCommits<>(consumer, work, commits);
    }

    /** Whether a failure the throttled strategy reports is passed on to the channel (else it waits by design). */
    boolean passesOn(Throwable failure, Duration maxAge) {
        if (failure instanceof KafkaThrottledLatestProcessedCommit.TooManyMessagesWithoutAckException
                && (pauses.pausedWithin(maxAge) || waitedWithin(maxAge))
                && !stuck(maxAge)) {
            Log.debugf(
                    "A record has waited longer than %s, but not outside the worker's pauses (%s): not stuck",
                    maxAge, pauses.active());
            return false;
        }
        return true;
    }

    /**
     * Whether a record waited for its turn ({@code messaging.intake.ReadAhead}) within {@code maxAge}: the read-ahead holds records for as
     * long as the backlog before them takes, by design, and the time one waits is not counted against it.
     */
    boolean waitedWithin(Duration maxAge) {
        return progress.waitedWithin(maxAge);
    }

    /**
     * Whether a record in progress has waited longer than {@code maxAge}, not counting the pauses it waited through
     * nor its wait for its turn ({@link RequestsInProgress#anyWorkedLongerThan}).
     */
    boolean stuck(Duration maxAge) {
        return progress.anyWorkedLongerThan(maxAge);
    }
}
