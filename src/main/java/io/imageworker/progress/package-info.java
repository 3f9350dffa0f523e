/**
 * What is in progress on this worker, in one place: {@link io.imageworker.progress.RequestsInProgress} holds every
 * record taken from the request topics to run, from its start to its end (by partition), the place in progress of each
 * request whose turn came (by its name), the work of each request under way and whether a call of it has left (by its
 * name), its records waiting for their turn or being parked, and the requests parked lately. The offsets start and end
 * its records ({@code messaging.offsets.InFlight}, its end told by the result sink alone), {@code
 * processing.RequestProcessor} its requests' work, the read-ahead their wait for their turn, the parking's decision
 * their parks, the gateway their calls; the intake, the commit strategy, the drain, the parking's decision, the status
 * read model and cancellation read it. No other class keeps a collection of the records in progress ({@code
 * ArchitectureTest}).
 *
 * <p>{@link io.imageworker.progress.RequestEvents} is how the layers below the status read model ({@code
 * api.RequestStates}) tell it the rest of a request's course (queued in its producer's line, a call left, ended, the
 * partitions owned): they know that interface, never the read model.
 *
 * <p>It may use {@code gateway} (its {@code CallListener}), {@code turns}, {@code support}, {@code config}, the contract
 * records and Kafka's types; the layers above it may use it.
 */
package io.imageworker.progress;
