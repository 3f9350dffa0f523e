/**
 * The worker's HTTP interface beside Kafka: {@link io.imageworker.api.RequestStatusResource} answers {@code GET
 * /requests/{requestId}} from the result ledger and the requests this worker holds, without blocking, and is described
 * in the OpenAPI document at {@code /q/openapi} (the AsyncAPI document at {@code /asyncapi/asyncapi.yaml} describes
 * the topics). It only reads: nothing here starts, changes or ends a request.
 *
 * <p>The requests this worker holds are the status read model's, {@link io.imageworker.api.RequestStates}: what is in
 * progress it reads from {@code progress.RequestsInProgress}, and the rest (each producer's line of requests waiting for
 * their first call, {@link io.imageworker.api.ProducerLines}; the recent rate of calls, {@link
 * io.imageworker.api.CallRate}; the partitions owned) it keeps from the events of {@code progress.RequestEvents} alone,
 * which the layers below tell through that interface without knowing it. Nothing below this package uses it, and
 * nothing but those events changes it ({@code ArchitectureTest}).
 *
 * <p>A queued request's answer says where it stands ({@link io.imageworker.api.Standings}: its position in its
 * producer's line and the estimate of {@link io.imageworker.api.QueueEstimate}), an unknown one what this replica can
 * tell of the others (the partitions it owns).
 *
 * <p>It may use every package below it (it uses {@code progress}, {@code storage}, the gateway's and the spend guard's
 * state, {@code config} and the contract records); of the layers above, the console uses it (it shows the read
 * model's queue) and the start-up check of {@code health} reads its settings ({@link
 * io.imageworker.api.StatusSettings}); {@code messaging} does not.
 */
package io.imageworker.api;
