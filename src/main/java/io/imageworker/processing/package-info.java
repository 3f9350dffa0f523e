/**
 * The story of one request, told by {@link io.imageworker.processing.RequestProcessor}: an outcome already recorded is
 * replayed; otherwise {@link io.imageworker.processing.RequestValidator} checks the request against the event contract,
 * the variants an earlier attempt recorded are recalled, the deadline is checked, {@link
 * io.imageworker.processing.CallPlanner} decides the call (the size to send, an edit's inputs), {@link
 * io.imageworker.processing.Variants} makes each variant still to make (its gateway calls, its image taken and stored,
 * recorded when {@code count} is above 1), and the outcome is recorded. {@link io.imageworker.processing.RequestSoFar}
 * carries what a request has come to from stage to stage, and {@link io.imageworker.processing.Endings} turns a stage's
 * failure into the request's or the variant's end. {@link io.imageworker.processing.Cancellations} holds the cancels
 * (contract v1.2) fed to it from above, and gives each request a ticket that lets its gateway calls leave, or stops it
 * ({@code CANCELLED}) while none has. What comes out is a terminal event, which the caller publishes; the progress on the
 * way ({@code image.started}) goes to the gateway's {@code CallListener} beans, not through this package's methods.
 * {@link io.imageworker.processing.RequestProcessor} tells the registry of what is in progress ({@code
 * progress.RequestsInProgress}) as each request's work begins and ends, and the status read model of that end through
 * {@code progress.RequestEvents}, never the read model itself.
 *
 * <p>It may use {@code progress}, {@code reference}, {@code storage}, {@code gateway}, {@code memory}, {@code image}, {@code support}, {@code config} and
 * the contract records of {@code io.imageworker}; only {@code health}, {@code api} and {@code messaging} may use it.
 * It knows nothing of Kafka: a request comes in as its id and JSON, and leaves as an event.
 */
package io.imageworker.processing;
