/**
 * The records of the event contract, at the bottom of the layers: what a producer sends ({@link
 * io.imageworker.ImageRequest}, its {@link io.imageworker.ImageSource}s, {@link io.imageworker.Operation}, the rule of
 * a {@link io.imageworker.RequestId}), what the worker publishes ({@link io.imageworker.TerminalEvent} with its {@link
 * io.imageworker.ErrorCode} and {@link io.imageworker.Billing}, {@link io.imageworker.ImageStarted}) and records
 * ({@link io.imageworker.VariantOutcome}), the {@link io.imageworker.Lane} a request came in by, and {@link
 * io.imageworker.RequestFailure}, the reason any stage gives to end a request without an image; and {@link
 * io.imageworker.EventCodec}, their one JSON form, which the ledger keeps and the publisher sends.
 *
 * <p>Every package of the worker may use them; they use nothing of the worker, so that the contract's shapes do not
 * depend on how the worker is built. The rules are {@code ArchitectureTest}'s.
 */
package io.imageworker;
