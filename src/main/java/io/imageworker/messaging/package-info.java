/**
 * Kafka in and out, at the top of the layers. {@link io.imageworker.messaging.RequestConsumer} consumes the request
 * topic and the optional priority lane ({@link io.imageworker.messaging.Lanes}: each with its own limit of requests in
 * progress), has {@link io.imageworker.messaging.RecordReader} read each record (plain JSON or a CloudEvent) on the CPU
 * pool, hands a readable request to {@code processing}, has {@link io.imageworker.messaging.ResultSender} publish its
 * terminal event (or an unreadable record's DLQ copy, both made by {@link io.imageworker.messaging.ResultPublisher}),
 * and acknowledges the record only then. By default a result goes out in a Kafka transaction with the offsets it
 * completes ({@link io.imageworker.messaging.ResultTransactions}), so that a {@code read_committed} consumer sees
 * exactly one per request. {@link io.imageworker.messaging.RecordContext} is where a record came from, and {@link
 * io.imageworker.messaging.RequestSpans} a request's span. {@link io.imageworker.messaging.IdleConnector} is the source
 * of the priority lane when it is off. {@link io.imageworker.messaging.CancelReader} reads the optional cancel topic
 * (contract v1.2) from every partition, without a consumer group, and hands each cancel to {@code
 * processing.Cancellations}.
 *
 * <p>The offsets, which requests are in progress and the graceful drain are {@code messaging.offsets}': this package
 * takes records and publishes results, and tells each record's start and end to {@link
 * io.imageworker.messaging.offsets.InFlight}.
 *
 * <p>{@link io.imageworker.messaging.KafkaBudgetLog} is the spend guard's {@code gateway.BudgetLog} on Kafka. It and
 * the cancel reader read through one {@link io.imageworker.messaging.TopicReader}: a plain consumer on a thread of its
 * own that restarts after a failure where it stopped and says when it stalls. {@link
 * io.imageworker.messaging.KafkaClientConfig} gives the clients the worker makes itself its {@code kafka.*} settings.
 *
 * <p>It may use every package below it; no package may use it, so Kafka's records, channels and commits stay here.
 */
package io.imageworker.messaging;
