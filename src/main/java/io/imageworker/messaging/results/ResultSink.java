package io.imageworker.messaging.results;

import io.imageworker.contract.TerminalEvent;
import io.imageworker.messaging.intake.ReadAhead;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.OffsetCommits;
import io.imageworker.support.AbandonedException;
import io.opentelemetry.api.trace.Span;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Where every record taken from the request topics ends: its result sent (its request's terminal event, or its DLQ
 * copy when it is no readable request), the record acknowledged or left for redelivery, and its end told once to the
 * offsets ({@link InFlight.Run#end}) and to the requests in progress ({@link InFlight.Run#finished}). The sink is the
 * only writer of that end ({@code ArchitectureTest}); it is chosen once, at start-up ({@link ResultSinks}):
 *
 * <ul>
 *   <li>{@link TransactionalSink} (the default): each result in a Kafka transaction with the offsets it completes
 *       ({@link ResultTransactions}), which tells the record's end as it commits, before the result's {@code Uni}
 *       completes; the offsets are committed by transactions only, and records may be parked ({@link #parker});
 *   <li>{@link AcknowledgedSink} ({@code IMAGE_WORKER_TRANSACTIONS_ENABLED=false}): results published one by one,
 *       each record's end told once it is acknowledged, the offsets committed by the consumer, nothing parked.
 * </ul>
 *
 * <p>It is also who commits the offsets ({@link OffsetCommits}), as the commit strategy and a rebalance see it.
 */
public interface ResultSink extends OffsetCommits {

    /**
     * Sends the request's terminal event {@code result}, as a stage of its span; the {@code Uni} completes once Kafka
     * has it (in a transaction: once it is committed with the record's offset, and the record ended).
     */
    Uni<Void> publish(TerminalEvent result, RecordContext context, InFlight.Run run, Span span);

    /** Sends the record's DLQ copy, with the reason it is not a readable request; completes as {@link #publish}. */
    Uni<Void> deadLetter(byte[] value, RecordContext context, InFlight.Run run, String reason);

    /**
     * How records are parked (a copy to the parked topic committed as one with the record's offset); empty when this
     * sink cannot make the copy and the commit one: a record could be parked twice or committed without its copy.
     */
    Optional<Parker> parker();

    /**
     * Acknowledges the record of {@code run}, whose result {@link #publish} or {@link #deadLetter} sent, and tells its
     * end ({@link InFlight.Run#end}) when its result's transaction did not. Only {@link #end} calls it.
     */
    Uni<Void> acknowledge(Message<?> message, InFlight.Run run);

    /**
     * The record {@code message} taken as {@code run} brought to its end: left unacknowledged when it was not taken
     * (shutting down, or its partition was taken away on its way: the next consumer gets it), acknowledged as it is
     * when the partition's last owner finished it; else {@code handling} (read, process, publish) runs and the record
     * is acknowledged ({@link #acknowledge}) once its result is sent. A failure ends it unacknowledged: given up
     * (shutting down, or its partition gone while it waited for its turn), it is redelivered to the next worker; any
     * other failure nacks it, which fails the channel so that it is redelivered. However it ends, it is in progress no
     * more ({@link InFlight.Run#finished}).
     */
    default Uni<Void> end(Message<?> message, RecordContext context, InFlight.Run run, Supplier<Uni<Void>> handling) {
        return switch (run.start()) {
            case LEFT -> Uni.createFrom().voidItem();
            case DONE -> {
                Log.debugf("Record %s was finished by the partition's last owner; acknowledged", context.position());
                yield Uni.createFrom().completionStage(message.ack());
            }
            case RUN ->
                handling.get()
                        .onItemOrFailure()
                        .transformToUni((ok, failure) -> failure == null
                                ? acknowledge(message, run)
                                : unacknowledged(message, context, run, failure))
                        .onTermination()
                        .invoke(run::finished);
        };
    }

    /**
     * The end of a record whose handling failed. No transaction ended it: one that commits a result tells the record's
     * end before the result's {@code Uni} completes, and one that does not fails it unended.
     */
    private static Uni<Void> unacknowledged(
            Message<?> message, RecordContext context, InFlight.Run run, Throwable failure) {
        run.end(InFlight.Outcome.UNACKNOWLEDGED);
        if (failure instanceof AbandonedException || failure instanceof ReadAhead.GivenUp) {
            // Shutting down, or its partition gone while it waited for its turn: neither acknowledged nor failed, so
            // the record is redelivered to the next worker.
            Log.info(failure.getMessage());
            return Uni.createFrom().voidItem();
        }
        Log.errorf(
                failure,
                "Record %s could not be brought to an end; failing the channel so that it is redelivered",
                context.position());
        return Uni.createFrom().completionStage(message.nack(failure));
    }

    /** Parks a record: its {@code copy} to the parked topic, committed with the offset of the record {@code run} took. */
    @FunctionalInterface
    interface Parker {

        /**
         * Done once the copy and the record's offset are committed together, the record ended.
         *
         * @param requestId the request's id, or the record's position when it is no request (for a message)
         */
        Uni<Void> park(String requestId, InFlight.Run run, ProducerRecord<byte[], byte[]> copy);
    }
}
