/**
 * Kafka in and out, at the top of the layers. {@link io.imageworker.messaging.RequestConsumer} consumes the request
 * topic and the optional priority lane, each with its own limit of requests in progress, has {@link
 * io.imageworker.messaging.RecordReader} read each record (plain JSON or a CloudEvent) on the CPU pool, hands a
 * readable request to {@code processing}, and acknowledges the record only once its terminal event (or an unreadable
 * record's DLQ copy, both made by {@link io.imageworker.messaging.ResultPublisher}) is published: by default in a Kafka
 * transaction with the offsets it completes ({@link io.imageworker.messaging.ResultTransactions}), so that a
 * {@code read_committed} consumer sees exactly one per request. {@link io.imageworker.messaging.RecordContext} is where
 * a record came from.
 *
 * <p>The commits (by the results' transactions, or, with them off, by the strategy): {@link
 * io.imageworker.messaging.PauseAwareCommit} is SmallRye's throttled strategy told which records
 * wait by design, and with {@link io.imageworker.messaging.FinishedAboveCommits} every commit carries the records
 * finished above its offset ({@link io.imageworker.messaging.FinishedAbove}); {@link
 * io.imageworker.messaging.PartitionWork} tracks the requests in progress per partition, and {@link
 * io.imageworker.messaging.RevocationGrace} lets those on partitions taken away finish and commit before they go.
 * {@link io.imageworker.messaging.IdleConnector} is the source of the priority lane when it is off. {@link
 * io.imageworker.messaging.CancelReader} reads the optional cancel topic (contract v1.2) from every partition, without
 * a consumer group, and hands each cancel to {@code processing.Cancellations}; {@link
 * io.imageworker.messaging.KafkaBudgetLog} is the spend guard's {@code gateway.BudgetLog} on Kafka. Both read through
 * one {@link io.imageworker.messaging.TopicReader}: a plain consumer on a thread of its own that restarts after a
 * failure where it stopped and says when it stalls. {@link io.imageworker.messaging.KafkaClientConfig} gives the
 * clients the worker makes itself its {@code kafka.*} settings.
 *
 * <p>It may use every package below it; no package may use it, so Kafka's records, channels and commits stay here.
 */
package io.imageworker.messaging;
