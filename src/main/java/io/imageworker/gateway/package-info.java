/**
 * Everything about calling the paid gateway. {@link io.imageworker.gateway.GatewayCalls} is the loop that calls until
 * the gateway gives an image or the retry policy gives up (a request runs one per variant): before each call it waits
 * for {@link io.imageworker.gateway.GatewayGuard} (a dead token or a wrong address pauses intake) and {@code
 * spend.BudgetGuard} (the fleet's spend cap, a package of its own), runs the call
 * within {@link io.imageworker.gateway.ConcurrencyLimiter} (the adaptive limit, waited for in {@code turns}'
 * fair turns: priority lane first, producers by their weights), and lets {@link
 * io.imageworker.gateway.RetryPolicy} decide from what a failed call cost whether it is tried again. {@link
 * io.imageworker.gateway.GatewayClient} is the only code that talks to the gateway, and {@link
 * io.imageworker.gateway.AnswerClassifier} the one place where its answers are interpreted into a {@link
 * io.imageworker.gateway.GatewayAnswer}: an image, or a {@link io.imageworker.gateway.GatewayFailure} of a {@link
 * io.imageworker.gateway.FailureKind} that fixes its cost and error code. {@link io.imageworker.gateway.AnswerSizes}
 * sizes each call's reservation in the memory budget, and {@link io.imageworker.gateway.ImageDownloader} downloads an
 * image the gateway answers with as a {@code url} (through {@code net}'s guarded fetcher), for {@link
 * io.imageworker.gateway.ImageReceiver}, which takes the image out of an answer and checks it into a {@link
 * io.imageworker.gateway.ReceivedImage}. Each call that leaves is told
 * to the {@link io.imageworker.gateway.CallListener} beans (a layer above publishes {@code image.started}). The rules cited as "gateway contract §N" are in {@code
 * docs/gateway-contract.md}.
 *
 * <p>It may use {@code spend}, {@code memory}, {@code net}, {@code image}, {@code turns}, {@code support}, {@code config} and the contract records of {@code io.imageworker}; it
 * knows nothing of request records, the store or a request's story, which are above it ({@code storage}, {@code
 * reference}, {@code processing}, {@code health} and {@code messaging} may use it).
 */
package io.imageworker.gateway;
