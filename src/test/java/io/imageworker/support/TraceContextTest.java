package io.imageworker.support;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TraceContextTest {

    @Test
    void keepsTheTraceIdAndFlagsWithANewSpanId() {
        String incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

        String continued = TraceContext.continueTrace(incoming);

        assertThat(continued).matches("00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01");
        assertThat(continued).isNotEqualTo(incoming);
    }

    @Test
    void dropsAnInvalidTraceparent() {
        assertThat(TraceContext.continueTrace(null)).isNull();
        assertThat(TraceContext.continueTrace("garbage")).isNull();
        assertThat(TraceContext.continueTrace("00-00000000000000000000000000000000-00f067aa0ba902b7-01"))
                .isNull();
    }
}
