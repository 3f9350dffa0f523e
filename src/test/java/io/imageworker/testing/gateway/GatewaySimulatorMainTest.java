package io.imageworker.testing.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The standalone command line. */
class GatewaySimulatorMainTest {

    @Test
    void readsEveryOptionOnTopOfTheDefaults() {
        SimulatorSettings s = GatewaySimulator.settingsFromArgs(new String[] {
            "--port", "18089", "--files-port", "18090", "--api-key", "sk-local123", "--quota", "unlimited",
            "--price", "5000", "--model", "gpt-image-1", "--latency-min-ms", "100", "--latency-max-ms", "900",
            "--concurrency-cap", "8", "--retry-after", "2", "--url-ratio", "0.5", "--url-lifetime-s", "30",
            "--oversize", "silently_change", "--flavour", "open_source", "--moderation-trigger", "NSFW"
        });

        assertThat(s.port()).isEqualTo(18089);
        assertThat(s.filesPort()).isEqualTo(18090);
        assertThat(s.apiKey()).isEqualTo("sk-local123");
        assertThat(s.unlimitedQuota()).isTrue();
        assertThat(s.pricePerCall()).isEqualTo(5000);
        assertThat(s.model()).isEqualTo("gpt-image-1");
        assertThat(s.latency()).isEqualTo(Latency.uniform(Duration.ofMillis(100), Duration.ofMillis(900)));
        assertThat(s.concurrencyCap()).isEqualTo(8);
        assertThat(s.retryAfterSeconds()).isEqualTo(2);
        assertThat(s.responseForm()).isEqualTo(ResponseForm.MIXED);
        assertThat(s.urlRatio()).isEqualTo(0.5);
        assertThat(s.urlLifetime()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.oversizeMode()).isEqualTo(OversizeMode.SILENTLY_CHANGE);
        assertThat(s.flavour()).isEqualTo(Flavour.OPEN_SOURCE);
        assertThat(s.moderationTrigger()).isEqualTo("NSFW");
    }

    @Test
    void listensOnTheHostTheCommandLineNames() {
        String[] args = {"--host", "localhost", "--api-key", "sk-local123"};
        assertThat(GatewaySimulator.hostFromArgs(new String[] {"--port", "0"})).isEqualTo("127.0.0.1");

        try (GatewaySimulator gateway =
                GatewaySimulator.start(GatewaySimulator.settingsFromArgs(args), GatewaySimulator.hostFromArgs(args))) {
            assertThat(gateway.baseUrl()).matches("http://localhost:\\d+");
            assertThat(gateway.filesBaseUrl()).matches("http://localhost:\\d+");
            assertThat(gateway.validApiKey()).isEqualTo("sk-local123");
        }
    }

    @Test
    void readsAFixedLatency() {
        assertThat(GatewaySimulator.settingsFromArgs(new String[] {"--latency-ms", "250"})
                        .latency())
                .isEqualTo(Latency.fixedMillis(250));
    }

    @Test
    void refusesUnknownOptionsAndMissingValues() {
        assertThatThrownBy(() -> GatewaySimulator.settingsFromArgs(new String[] {"--colour", "blue"}))
                .hasMessageContaining("unknown option --colour");
        assertThatThrownBy(() -> GatewaySimulator.settingsFromArgs(new String[] {"--port"}))
                .hasMessageContaining("missing value");
        assertThatThrownBy(() -> GatewaySimulator.settingsFromArgs(new String[] {"--api-key", "nope"}))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void startsOnTheSettingsTheCommandLineGives() {
        SimulatorSettings settings = GatewaySimulator.settingsFromArgs(new String[] {"--api-key", "sk-local123"});
        try (GatewaySimulator gateway = GatewaySimulator.start(settings)) {
            assertThat(gateway.validApiKey()).isEqualTo("sk-local123");
            assertThat(gateway.baseUrl()).matches("http://127\\.0\\.0\\.1:\\d+");
        }
    }
}
