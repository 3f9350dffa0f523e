/**
 * The S3-compatible bucket. {@link io.imageworker.storage.ImageStore} is the object store itself (the asynchronous S3
 * client built by {@link io.imageworker.storage.S3ClientProducer}), and refuses any key not built from validated parts
 * ({@link io.imageworker.storage.ObjectAddress}'s rules, the {@code requestId} rule). On it: {@link
 * io.imageworker.storage.ImageStorage} stores an image received from the gateway ({@code gateway.ReceivedImage}) under
 * its key; {@link
 * io.imageworker.storage.ResultLedger} keeps each request's terminal event (and each variant's outcome) as a result
 * document (in the JSON of {@code io.imageworker.contract.EventCodec}), which is what makes {@code requestId} an idempotency key.
 *
 * <p>It may use {@code gateway} (the image received from an answer), {@code image}, {@code
 * support}, {@code config} and the contract records of {@code io.imageworker}; {@code reference}, {@code processing},
 * {@code health}, {@code api} and {@code messaging} may use it.
 */
package io.imageworker.storage;
