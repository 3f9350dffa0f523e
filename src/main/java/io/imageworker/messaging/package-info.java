/**
 * Kafka in and out for the request topics. {@link io.imageworker.messaging.RequestConsumer} consumes the request topic
 * and the optional priority lane (through {@code messaging.intake}: each lane with its own limit of requests in
 * progress, the records read ahead waiting for their producer's turn), has {@link io.imageworker.messaging.RecordReader}
 * read each record (plain JSON or a CloudEvent) on the CPU pool, hands a readable request to {@code processing}, has
 * {@link io.imageworker.messaging.ResultSender} publish its terminal event (or an unreadable record's DLQ copy, both
 * made by {@link io.imageworker.messaging.ResultPublisher}), and acknowledges the record only then. By default a result
 * goes out in a Kafka transaction with the offsets it completes ({@link io.imageworker.messaging.ResultTransactions}),
 * so that a {@code read_committed} consumer sees exactly one per request. {@link io.imageworker.messaging.RecordContext}
 * is where a record came from, and {@link io.imageworker.messaging.RequestSpans} a request's span. The
 * clients the worker makes itself take their {@code kafka.*} settings from {@code messaging.kafka}.
 *
 * <p>Its sub-packages are layers of their own: {@code messaging.sidetopics} (the budget log and the cancel topic) above
 * it; {@code messaging.intake} (the lanes and their read-ahead), {@code messaging.offsets} (the offsets, which
 * requests are in progress and the graceful drain) and {@code messaging.kafka} (the clients' settings) below it. This package takes records and publishes results, and
 * tells each record's start and end to {@link io.imageworker.messaging.offsets.InFlight}. The results' classes are to
 * move to a package of their own; until then they share this one with the consumer.
 *
 * <p>It may use every package below it; no package uses it (the side topics' readers above it share only {@code
 * messaging.kafka} with it), so Kafka's records, channels and commits stay in the Kafka half.
 */
package io.imageworker.messaging;
