/**
 * A request record's result on its way out: what the record ends in (its request's terminal event, or its DLQ copy),
 * sent so that it is visible exactly when the record's offset is committed, and the record's end. The result sink
 * ({@link io.imageworker.messaging.results.ResultSink}, transactional or acknowledged, chosen once at start-up by
 * {@code ResultSinks}) is the one writer of every record's end, and sends what {@link
 * io.imageworker.messaging.results.ResultPublisher}
 * makes (the CloudEvents, the DLQ copies, the {@code image.started} hints), with the key and trace the record leaves
 * room for ({@link io.imageworker.messaging.results.ResultEnvelope}) and where it came from ({@link
 * io.imageworker.messaging.results.RecordContext}). By default a result goes out in a Kafka transaction with the
 * offsets it completes ({@link io.imageworker.messaging.results.ResultTransactions}): each request topic's results are
 * batched ({@code TopicTransactions}) through a transactional producer ({@code TransactionalProducer}), a commit that
 * failed without saying whether it went through is settled by the committed offsets ({@code InDoubtSettlement}), and
 * what advanced without a result is committed by offsets-only transactions ({@code CommittedOffsets}).
 *
 * <p>It sits below the consumer ({@code messaging}), which hands it each record's result, and above the read-ahead
 * and the offsets ({@code messaging.intake}, {@code messaging.offsets}): a result's transaction tells its record's
 * end to the offsets ({@link io.imageworker.messaging.offsets.InFlight.Run#end}) before anything else reads the
 * partition's progress.
 */
package io.imageworker.messaging.results;
