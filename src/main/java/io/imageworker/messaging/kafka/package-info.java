/**
 * What the Kafka half shares about Kafka itself: {@link io.imageworker.messaging.kafka.KafkaClientConfig} gives the
 * clients the worker makes itself (the results' transactional producer, the side topics' readers and writer) its
 * {@code kafka.*} settings. Below {@code messaging} and {@code messaging.sidetopics}, so that the side topics use it
 * without pointing up at the consumer of the request topics.
 *
 * <p>It uses nothing of the worker; every package of the Kafka half may use it.
 */
package io.imageworker.messaging.kafka;
