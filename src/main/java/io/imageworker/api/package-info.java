/**
 * The worker's HTTP interface beside Kafka: {@link io.imageworker.api.RequestStatusResource} answers {@code GET
 * /requests/{requestId}} from the result ledger and the requests this worker holds, without blocking, and is described
 * in the OpenAPI document at {@code /q/openapi} (the AsyncAPI document at {@code /asyncapi/asyncapi.yaml} describes
 * the topics). It only reads: nothing here starts, changes or ends a request.
 *
 * <p>A queued request's answer says where it stands ({@link io.imageworker.api.Standings}: its position in its
 * producer's line and the estimate of {@link io.imageworker.api.QueueEstimate}), an unknown one what this replica can
 * tell of the others (the partitions it owns).
 *
 * <p>It may use every package below it (it uses {@code processing}, {@code storage}, the gateway's and the spend
 * guard's state, {@code config} and the contract records of {@code io.imageworker}); only {@code messaging} may use
 * it, and does not.
 */
package io.imageworker.api;
