package io.imageworker.pipeline;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/** {@code IMAGE_WORKER_PAUSE_ON_GATEWAY_FAULT=false}: gateway faults fail each request instead of pausing. */
public class FailFastProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("image-worker.pause-on-gateway-fault", "false");
    }
}
