/**
 * Parking (fair shares at any backlog): the records of the request topic that would otherwise wait beyond their
 * partition's window, or past their producer's share of the read-ahead, copied to the parked topic in the transaction
 * of their offsets ({@link io.imageworker.messaging.parking.RequestParking}), each producer's in a partition of its
 * own while there are enough and each request's copies in one ({@link
 * io.imageworker.messaging.parking.ParkedPartitions}), and read back with each
 * partition of the parked topic held to its share ({@link io.imageworker.messaging.parking.ParkedHolds}, counting
 * polls through {@link io.imageworker.messaging.parking.ParkedPolls}). Which record is parked is decided here too
 * ({@link io.imageworker.messaging.parking.Parking}: beyond its window, past its producer's share, or a copy of a
 * request parked lately), asked by the read-ahead through {@code messaging.intake.ParkingDecision}; the consumer in
 * {@code messaging} hands the record here.
 *
 * <p>It may use {@code messaging.results} (the copy goes out in a result transaction), {@code messaging.intake} (the
 * decision the read-ahead asks), {@code messaging.offsets} and every package below them; only {@code messaging}'s
 * consumer, above it, uses it.
 */
package io.imageworker.messaging.parking;
