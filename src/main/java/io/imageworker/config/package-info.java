/**
 * The settings: {@link io.imageworker.config.WorkerConfig}, the worker's own settings under the prefix {@code image-worker}
 * (each also an environment variable, named as in docs/configuration.md; a group one package owns is a mapping of
 * that package), {@link io.imageworker.config.TopicSettings}, the topic names, which the Kafka half, cancellation,
 * the status queries, the start-up check and the console all read, and {@link
 * io.imageworker.config.PriorityLaneSwitch}, which turns the priority lane's channel on exactly when its topic is
 * named; {@code health.ConfigurationCheck} finds the settings missing or contradicting each other (the
 * start-up check of {@code health} refuses to start on them); {@link io.imageworker.config.KafkaClientConfig} gives the
 * Kafka clients the worker makes itself (a transactional producer, an Admin client, the side topics' readers) the
 * application's {@code kafka.*} settings.
 *
 * <p>Every layer above may read the settings (a group one package owns is a mapping of that package); this package may use only the contract records of {@code io.imageworker}
 * (it uses none), so that a setting never depends on the code it configures.
 */
package io.imageworker.config;
