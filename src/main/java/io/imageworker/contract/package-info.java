/**
 * The records of the event contract, at the bottom of the layers: what a producer sends ({@link
 * io.imageworker.contract.ImageRequest}, its {@link io.imageworker.contract.ImageSource}s, {@link io.imageworker.contract.Operation}, the rule of
 * a {@link io.imageworker.contract.RequestId}), what the worker publishes ({@link io.imageworker.contract.TerminalEvent} with its {@link
 * io.imageworker.contract.ErrorCode} and {@link io.imageworker.contract.Billing}, {@link io.imageworker.contract.ImageStarted}) and records
 * ({@link io.imageworker.contract.VariantOutcome}), the {@link io.imageworker.contract.Lane} a request came in by, and {@link
 * io.imageworker.contract.RequestFailure}, the reason any stage gives to end a request without an image; and {@link
 * io.imageworker.contract.EventCodec}, their one JSON form, which the ledger keeps and the publisher sends.
 *
 * <p>Every package of the worker may use them; they use nothing of the worker, so that the contract's shapes do not
 * depend on how the worker is built. The rules are {@code ArchitectureTest}'s.
 */
package io.imageworker.contract;
