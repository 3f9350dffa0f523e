package io.imageworker.testing.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.assertj.core.api.AbstractStringAssert;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * What the simulator's own tests share: one simulator with the default settings for the class, an HTTP client of it,
 * and a reset before each test (settings, token, quota, faults and records back to their start). The simulator is
 * in a static field of this class, which all its subclasses share: they run one at a time (the lock), beside other
 * test classes.
 */
@ResourceLock("SimulatorTestSupport")
abstract class SimulatorTestSupport {

    static GatewaySimulator gateway;
    static SimulatorHttp http;

    @BeforeAll
    static void startSimulator() {
        gateway = GatewaySimulator.start(SimulatorSettings.defaults());
        http = new SimulatorHttp(gateway);
    }

    @AfterAll
    static void stopSimulator() {
        gateway.close();
    }

    @BeforeEach
    void resetSimulator() {
        gateway.reset();
    }

    /** Checks that {@code response} is an error answer of {@code status}; returns an assertion on its message. */
    static AbstractStringAssert<?> assertErrorAnswer(HttpResponse<String> response, int status) {
        assertThat(response.statusCode()).isEqualTo(status);
        return assertThat(SimulatorHttp.errorMessage(response));
    }
}
