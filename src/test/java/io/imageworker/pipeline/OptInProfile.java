package io.imageworker.pipeline;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * The settings off by default that some tests need on, in one profile so that those tests share one start of the worker
 * (each profile is a build and a start of its own: 6 to 7 s each on a busy 2-core machine). None of them changes what the others
 * test:
 *
 * <ul>
 *   <li>{@code IMAGE_WORKER_PAUSE_ON_GATEWAY_FAULT=false} ({@link GatewayFaultFailFastTest}): a dead token or a wrong
 *       address fails each request instead of pausing; the other tests here meet neither;
 *   <li>{@code IMAGE_WORKER_STORAGE_PRESIGN=true} ({@link PresignedUrlTest}): image-completed carries a GET URL; the
 *       presigning is done within the {@code store image} stage, no span or call of its own;
 *   <li>traces on ({@link TracingTest}): the SDK on, spans handed to the exporter at once; a test reads only the spans
 *       of its own trace.
 * </ul>
 */
public class OptInProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "image-worker.pause-on-gateway-fault",
                "false",
                "image-worker.storage.presign",
                "true",
                "image-worker.storage.presign-ttl",
                "10m",
                "quarkus.otel.sdk.disabled",
                "false",
                "quarkus.otel.bsp.schedule.delay",
                "20ms");
    }
}
