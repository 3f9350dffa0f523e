/**
 * The spend guard: the fleet's spend cap (and each producer's, contract v1.2), which a gateway call must have a place
 * in before it leaves. {@link io.imageworker.spend.BudgetGuard} claims the place through a {@link
 * io.imageworker.spend.BudgetLog} shared by every replica, judges the claims with its own {@link
 * io.imageworker.spend.BudgetLedger}, and holds calls (or fails them, as set) while the window is spent, counted by {@link
 * io.imageworker.spend.HeldRequests}; its gauges are registered by {@link io.imageworker.spend.BudgetGauges}.
 *
 * <p>The log is an interface here so that the guard knows nothing of Kafka: its implementation on a topic kept by time
 * is {@code messaging.sidetopics.KafkaBudgetLog}, with the other reader of a side topic. It may use {@code support},
 * {@code config} and the contract records of {@code io.imageworker}; {@code gateway} (which asks it before each call)
 * and the layers above may use it.
 */
package io.imageworker.spend;
