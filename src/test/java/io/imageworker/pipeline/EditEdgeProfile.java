package io.imageworker.pipeline;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * The settings of the edit tests that cannot run with the defaults, in one profile so that they share one start of the
 * worker:
 *
 * <ul>
 *   <li>{@code https://} references allowed from loopback, private and cloud-metadata hosts, by literal and by a name
 *       ({@code localhost}) that resolves to loopback: with them on the host list, a refusal can only come from the
 *       address rules, which no setting weakens;
 *   <li>{@code IMAGE_WORKER_GATEWAY_EDIT_MODE=single}: only the base image is sent, as {@code image}.
 * </ul>
 */
public class EditEdgeProfile implements QuarkusTestProfile {

    /** The hosts on the list; none of them may ever be fetched from. */
    static final String FORBIDDEN_BUT_LISTED_HOSTS =
            "localhost,127.0.0.1,::1,10.0.0.7,172.16.5.4,192.168.1.20,169.254.169.254,100.64.0.1";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "image-worker.reference.allowed-hosts",
                FORBIDDEN_BUT_LISTED_HOSTS,
                "image-worker.gateway.edit-mode",
                "single");
    }
}
