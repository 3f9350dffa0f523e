package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class GatewayEndpointTest {

    @ParameterizedTest
    @ValueSource(
            strings = {
                "https://gw.example.com",
                "https://gw.example.com/",
                "https://gw.example.com/v1",
                "https://gw.example.com/v1/",
                " https://gw.example.com// "
            })
    void everySpellingOfTheOriginMeansTheSameApiBase(String configured) {
        GatewayEndpoint endpoint = GatewayEndpoint.parse(configured);

        assertThat(endpoint.resolve(GatewayEndpoint.GENERATIONS))
                .isEqualTo("https://gw.example.com/v1/images/generations");
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://127.0.0.1:8080/proxy/", "http://127.0.0.1:8080/proxy/v1"})
    void keepsAPathPrefixInFrontOfV1(String configured) {
        assertThat(GatewayEndpoint.parse(configured).resolve(GatewayEndpoint.EDITS))
                .isEqualTo("http://127.0.0.1:8080/proxy/v1/images/edits");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "gw.example.com", "ftp://gw.example.com", "https://gw.example.com/v1?x=1"})
    void refusesWhatIsNotAnHttpOriginNamingTheSetting(String configured) {
        assertThatThrownBy(() -> GatewayEndpoint.parse(configured))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("IMAGE_WORKER_GATEWAY_BASE_URL");
    }
}
