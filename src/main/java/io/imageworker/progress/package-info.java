/**
 * What is in progress on this worker, in one place: {@link io.imageworker.progress.RequestsInProgress} holds every
 * record taken from the request topics to run, from its start to its end (by partition), and the place in progress of
 * each request whose turn came (by its name). The offsets start and end its records ({@code
 * messaging.offsets.InFlight}, its end told by the result sink alone); the intake, the commit strategy and the drain
 * read it. No other class keeps a collection of the records in progress ({@code ArchitectureTest}).
 *
 * <p>It may use {@code turns}, {@code support}, {@code config} and Kafka's types; the layers above it may use it.
 */
package io.imageworker.progress;
