package io.imageworker.pipeline;

import io.imageworker.contract.ImageStarted;
import io.imageworker.gateway.CallListener;
import jakarta.inject.Singleton;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A listener of the gateway's calls beside the worker's own, that fails on the calls of the requests it is armed for
 * ({@link #failFor}) and tells nothing otherwise: a progress listener that throws must neither fail nor stop a request.
 */
@Singleton
public class FailingCallListener implements CallListener {

    private final Set<String> armed = ConcurrentHashMap.newKeySet();
    private final Set<String> failed = ConcurrentHashMap.newKeySet();

    /** From now on, every call of {@code requestId} that leaves makes this listener throw. */
    void failFor(String requestId) {
        armed.add(requestId);
    }

    /** Whether a call of {@code requestId} did make this listener throw. */
    boolean failedFor(String requestId) {
        return failed.contains(requestId);
    }

    @Override
    public void sent(ImageStarted call) {
        if (armed.contains(call.requestId())) {
            failed.add(call.requestId());
            throw new IllegalStateException("the status topic is gone");
        }
    }
}
