/**
 * Kafka in for the request topics. {@link io.imageworker.messaging.RequestConsumer} consumes the request topic and the
 * optional priority lane (through {@code messaging.intake}: each lane with its own limit of requests in progress, the
 * records read ahead waiting for their producer's turn), has {@link io.imageworker.messaging.RecordReader} read each
 * record (plain JSON or a CloudEvent) on the CPU pool, hands a readable request to {@code processing}, has {@code
 * messaging.results} publish its terminal event (or an unreadable record's DLQ copy), and acknowledges the record only
 * then. {@link io.imageworker.messaging.RequestSpans} is a request's span.
 *
 * <p>Its sub-packages are layers of their own: {@code messaging.sidetopics} (the budget log and the cancel topic) above
 * it; {@code messaging.parking} (the parked topic, written and read back), {@code messaging.results} (the results and
 * their transactions), {@code messaging.intake} (the lanes and their read-ahead) and {@code messaging.offsets} (the
 * offsets, which requests are in progress and the graceful drain) below it. This package takes records and tells each record's start and end to {@link
 * io.imageworker.messaging.offsets.InFlight} (the end of one whose result went out in a transaction is told by that
 * transaction).
 *
 * <p>It may use every package below it; no package uses it ({@code messaging.sidetopics}, above it, uses none of it:
 * the clients the worker makes itself take their {@code kafka.*} settings from {@code config.KafkaClientConfig}), so
 * Kafka's records, channels and commits stay in the Kafka half.
 */
package io.imageworker.messaging;
