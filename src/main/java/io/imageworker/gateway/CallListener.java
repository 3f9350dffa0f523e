package io.imageworker.gateway;

import io.imageworker.contract.ImageStarted;

/**
 * Told as each gateway call of a request leaves, by {@link GatewayCalls}: a bean that a layer above implements
 * ({@code messaging.results.ResultPublisher} publishes the first call of each attempt of a request as {@code
 * image.started}; {@code progress.RequestsInProgress} marks the request's work as calling; the status read model,
 * through {@code progress.RequestEvents}, counts the call in its rate and takes the request out of its line). Called on the thread that sends the call: it must return at once; one that throws neither fails nor delays the call.
 */
public interface CallListener {

    /**
     * A call left: {@code call} names its request, its variant (null for a request without {@code count}), its
     * attempt number within the variant (a call sent again at once on a new connection, because the gateway had closed
     * the one it went out on, keeps its number) and how long it waited for its slot.
     */
    void sent(ImageStarted call);

    /**
     * {@link #sent(ImageStarted)} of a request stored as {@code storageId} ({@code ImageRequest.storageId()}: its id,
     * or {@code <producer>/<requestId>} where ids are unique within their producer); what {@link GatewayCalls} calls.
     */
    default void sent(ImageStarted call, String storageId) {
        sent(call);
    }
}
