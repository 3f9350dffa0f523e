package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.testing.StoreProxyTestResource;
import io.imageworker.testing.gateway.Fault;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/** With pausing off ({@link OptInProfile}), a dead token or a wrong address fails each request with its own code, unbilled. */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@TestProfile(OptInProfile.class)
@WithTestResource(StoreProxyTestResource.class)
class GatewayFaultFailFastTest extends PipelineTestSupport {

    @Test
    void aRevokedTokenFailsTheRequestAsUnauthorized() {
        gateway.control().revokeToken();
        String id = newId("401");
        JsonNode event = ended(id, "");

        assertThat(event.path("error").path("code").asText()).isEqualTo("UNAUTHORIZED");
        assertThat(event.path("error").path("gatewayStatus").asInt()).isEqualTo(401);
        assertThat(event.path("error").path("gatewayBody").asText()).contains("Invalid token");
        assertThat(event.path("billing").toString()).isEqualTo("{\"calls\":1,\"billed\":0,\"unknown\":0}");
        assertThat(event.toString()).doesNotContain(gateway.validApiKey());
    }

    @Test
    void anHtmlConsolePageFailsTheRequestAsMisconfigured() {
        gateway.control().injectFault(Fault.htmlConsolePage());
        String id = newId("html");
        JsonNode event = ended(id, "");

        assertThat(event.path("error").path("code").asText()).isEqualTo("GATEWAY_MISCONFIGURED");
        assertThat(event.path("billing").path("billed").asInt()).isZero();
    }
}
