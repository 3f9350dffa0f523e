/**
 * Fair turns: {@link io.imageworker.turns.FairTurns} hands out a number of places (permits) to callers that wait for
 * them without a thread, the priority lane first but for the normal lane's least share, and within each lane round-robin
 * among producers weighted by {@code config.ProducerWeights}, a producer held meanwhile getting none. It is the one
 * queue of turns the worker has: the gateway's {@code ConcurrencyLimiter} moves its number of places (the adaptive
 * limit), and the read-ahead of {@code messaging.intake} gives its places in progress with it.
 *
 * <p>It may use {@code support}, {@code config} and the contract records of {@code io.imageworker}; {@code gateway}
 * and the layers above it may use it.
 */
package io.imageworker.turns;
