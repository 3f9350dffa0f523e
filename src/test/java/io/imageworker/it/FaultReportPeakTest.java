package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.faults.FaultReport;
import io.imageworker.testing.gateway.RecordedCall;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The fault suite holds each worker process to the concurrency limit: a killed worker's call ends when the worker dies,
 * even when the gateway counts it until it notices the connection gone (a full run once saw 17 calls at once with a
 * limit of 16, one of them a killed worker's hung call). Calls of one living worker above the limit still count.
 */
class FaultReportPeakTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private static RecordedCall call(long arrivedSecond, Long finishedSecond) {
        return new RecordedCall(
                0,
                null,
                "POST",
                "/v1/images/generations",
                200,
                Map.of(),
                List.of(),
                List.of(),
                List.of(),
                null,
                null,
                null,
                null,
                1,
                true,
                1,
                0,
                T0.plusSeconds(arrivedSecond),
                finishedSecond == null ? null : T0.plusSeconds(finishedSecond),
                null,
                null,
                null);
    }

    @Test
    void aKilledWorkersHungCallEndsWithItsWorker() {
        List<RecordedCall> calls = new ArrayList<>();
        calls.add(call(0, null)); // hung when the worker was killed at 10 s; the gateway never saw it end
        for (int i = 0; i < 16; i++) {
            calls.add(call(20, 30L)); // the next worker's 16
        }

        assertThat(FaultReport.peakPerWorker(calls, List.of(T0.plusSeconds(10))))
                .isEqualTo(16);
        // Without the kill, the same calls were one worker's 17.
        assertThat(FaultReport.peakPerWorker(calls, List.of())).isEqualTo(17);
    }
}
