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
 *       of its own trace;
 *   <li>{@code https://} references allowed from loopback, private and cloud-metadata hosts, by literal and by a name
 *       ({@code localhost}) that resolves to loopback ({@link EditReferenceRefusalTest}): with them on the host list, a
 *       refusal can only come from the address rules, which no setting weakens; no other test here fetches a
 *       reference by address;
 *   <li>{@code IMAGE_WORKER_GATEWAY_EDIT_MODE=single} ({@link EditSingleModeTest}): only the base image of an edit is
 *       sent, as {@code image}; the references are still read (each a span of its own, as {@link TracingTest} checks).
 * </ul>
 *
 * <p>Its worker stores through a proxy of the store that the edit tests make refuse or stall
 * ({@code StoreProxyTestResource}); it passes everything through otherwise. (The edit settings were a profile of their
 * own, one more build and start of the worker.)
 */
public class OptInProfile implements QuarkusTestProfile {

    /** The hosts on the reference host list; none of them may ever be fetched from. */
    static final String FORBIDDEN_BUT_LISTED_HOSTS =
            "localhost,127.0.0.1,::1,10.0.0.7,172.16.5.4,192.168.1.20,169.254.169.254,100.64.0.1";

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
                "20ms",
                "image-worker.reference.allowed-hosts",
                FORBIDDEN_BUT_LISTED_HOSTS,
                "image-worker.gateway.edit-mode",
                "single");
    }
}
