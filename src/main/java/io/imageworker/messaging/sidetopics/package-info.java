/**
 * The side topics, read beside the request topics: {@link io.imageworker.messaging.sidetopics.KafkaBudgetLog} is the
 * spend guard's {@code spend.BudgetLog} on a Kafka topic kept by time (its records written by {@link
 * io.imageworker.messaging.sidetopics.BudgetWriter} and read strictly by {@link
 * io.imageworker.messaging.sidetopics.BudgetRecords}), and {@link
 * io.imageworker.messaging.sidetopics.CancelReader} reads the optional cancel topic (contract v1.2) from every
 * partition and hands each cancel to {@code processing.Cancellations}. Both read through one {@link
 * io.imageworker.messaging.sidetopics.TopicReader}: a plain consumer, without a consumer group, on a thread of its own
 * that restarts after a failure where it stopped and says when it stalls; a record one of them cannot apply is
 * skipped and counted ({@link io.imageworker.messaging.sidetopics.SkippedRecords}, exported from the start by {@link
 * io.imageworker.messaging.sidetopics.SideTopicMetrics}).
 *
 * <p>It is the top layer: it may use every package below it but {@code messaging} (the consumer of the request topics),
 * its clients' {@code kafka.*} settings coming from {@code config.KafkaClientConfig};
 * no package uses it, the budget log being injected as the interface the spend guard declares.
 */
package io.imageworker.messaging.sidetopics;
