package io.imageworker.messaging.results;

import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.RecordCopy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * One record's result on its way to its topic's next transaction ({@link TopicTransactions}).
 *
 * @param requestId its request's id (or the record's position when it is no request), for a message
 * @param run the record it is the result of, whose offset the transaction commits and whose end it tells
 * @param records what is published
 * @param cut makes the same records with any DLQ copy's value cut, for a copy Kafka refused as too large; or null
 * @param done completes once the transaction is committed and the record ended ({@link InFlight.Run#end})
 * @param park whether it is a parked copy rather than a result: batched by the thousand ({@link TopicTransactions})
 */
record PendingResult(
        String requestId,
        InFlight.Run run,
        List<ProducerRecord<byte[], byte[]>> records,
        Supplier<List<ProducerRecord<byte[], byte[]>>> cut,
        CompletableFuture<Void> done,
        boolean park) {

    PendingResult(
            String requestId,
            InFlight.Run run,
            List<ProducerRecord<byte[], byte[]>> records,
            Supplier<List<ProducerRecord<byte[], byte[]>>> cut) {
        this(requestId, run, records, cut, new CompletableFuture<>(), false);
    }

    /** The parked copy {@code copy} of the record {@code run} took. */
    static PendingResult parked(String requestId, InFlight.Run run, ProducerRecord<byte[], byte[]> copy) {
        return new PendingResult(requestId, run, List.of(copy), null, new CompletableFuture<>(), true);
    }

    /** The copy of the record it is the result of. */
    RecordCopy record() {
        return run.record();
    }

    /** What is published: the records, or their cut form when {@code cut} is asked and there is one. */
    List<ProducerRecord<byte[], byte[]>> records(boolean cut) {
        return cut && this.cut != null ? this.cut.get() : records;
    }
}
