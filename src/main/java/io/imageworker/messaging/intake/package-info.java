/**
 * The request lanes' intake: which record taken from a request topic goes into progress, and when. {@link
 * io.imageworker.messaging.intake.Lanes} subscribes each lane (the normal one, and the priority one when its topic is
 * set, else fed by {@link io.imageworker.messaging.intake.IdleConnector}) with a limit of its own; {@link
 * io.imageworker.messaging.intake.ReadAhead} holds the records read beyond those in progress and coordinates, for each,
 * {@link io.imageworker.messaging.intake.Admission} (their bytes bounded, their turns weighted among the producers,
 * within their partition's window) and {@link io.imageworker.messaging.intake.SteppingAside} (no turn to a producer held
 * by its spend cap, and a request in progress giving its place back while its cap holds it); a record to be parked takes no turn, as {@link io.imageworker.messaging.intake.ParkingDecision} says
 * (decided in {@code messaging.parking}).
 *
 * <p>It may use {@code messaging.offsets} (a record waiting for its turn is started there) and every package below it;
 * only {@code messaging}'s consumer and, for the parking decision, {@code messaging.parking}, above it, use it. It knows nothing of what a record says beyond its producer.
 */
package io.imageworker.messaging.intake;
