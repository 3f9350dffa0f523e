/**
 * What is in progress on this worker, in one place: {@link io.imageworker.progress.RequestsInProgress} holds every
 * record taken from the request topics to run, from its start to its end (by partition), the place in progress of each
 * request whose turn came (by its name), and the work of each request under way (by its name). The offsets start and
 * end its records ({@code messaging.offsets.InFlight}, its end told by the result sink alone), the status read model
 * its requests' work ({@code processing.RequestStates}); the intake, the commit strategy, the drain, the status read
 * model and cancellation read it. No other class keeps a collection of the records in progress ({@code ArchitectureTest}).
 *
 * <p>It may use {@code turns}, {@code support}, {@code config} and Kafka's types; the layers above it may use it.
 */
package io.imageworker.progress;
