package io.imageworker.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The rate of calls a queued request's estimate goes by: calls over a window that spans calls of any length, none
 * invented, a first burst not taken for a rate.
 */
class CallRateTest {

    private static final long T0 = 1_800_000_000_000L;

    private final CallRate rate = new CallRate();

    @Test
    void noCallNoRate() {
        assertThat(rate.perSecond(T0)).isEmpty();
    }

    @Test
    void noRateBeforeACallFinished() {
        rate.started(T0);
        rate.started(T0 + 100);

        assertThat(rate.perSecond(T0 + 5000)).isEmpty();

        rate.finished(2000);
        assertThat(rate.perSecond(T0 + 5000)).isNotEmpty();
    }

    @Test
    void callsOfAFullWindowAreCountedOverIt() {
        rate.finished(500);
        for (int second = 0; second < 120; second++) {
            rate.started(T0 + second * 1000L);
            rate.started(T0 + second * 1000L + 500);
        }

        assertThat(rate.perSecond(T0 + 120_000).orElseThrow()).isCloseTo(2.0, offset(0.05));
    }

    @Test
    void callsThatBeganLatelyAreCountedOverTheTimeSinceTheFirst() {
        rate.finished(200);
        for (int i = 0; i < 10; i++) {
            rate.started(T0 + i * 250L);
        }

        // 10 calls in 2.5 s, not 10 in a minute.
        assertThat(rate.perSecond(T0 + 2500).orElseThrow()).isEqualTo(4.0);
    }

    @Test
    void aBurstIsCountedOverAtLeastASecond() {
        rate.finished(10);
        rate.started(T0);
        rate.started(T0);
        rate.started(T0 + 10);

        assertThat(rate.perSecond(T0 + 20).orElseThrow()).isEqualTo(3.0);
    }

    @Test
    void aFirstBurstIsCountedOverAtLeastTheLengthOfACall() {
        // Four slots filled at once, calls of two minutes: one call length's worth of calls, 4 per 120 s.
        CallRate longCalls = new CallRate(CallRate.windowFor(Duration.ofMinutes(3)));
        longCalls.finished(120_000);
        for (int slot = 0; slot < 4; slot++) {
            longCalls.started(T0 + slot);
        }

        assertThat(longCalls.perSecond(T0 + 2000).orElseThrow()).isCloseTo(4 / 120.0, offset(1e-9));
    }

    @Test
    void aWindowWithoutCallsHasNoRateAndTheNextCallsStartAfresh() {
        rate.finished(1000);
        rate.started(T0);

        assertThat(rate.perSecond(T0 + 61_000)).isEmpty();

        rate.started(T0 + 90_000);
        rate.started(T0 + 91_000);
        assertThat(rate.perSecond(T0 + 92_000).orElseThrow()).isEqualTo(1.0);
    }

    @Test
    void theWindowSpansTwoOfTheLongestCallsAndAtLeastAMinute() {
        assertThat(CallRate.windowFor(Duration.ofSeconds(180))).isEqualTo(Duration.ofSeconds(360));
        assertThat(CallRate.windowFor(Duration.ofSeconds(10))).isEqualTo(Duration.ofMinutes(1));
        assertThat(new CallRate(Duration.ofSeconds(360)).window()).isEqualTo(Duration.ofSeconds(360));
        // Whole buckets of whole seconds: a window of 100 s is counted in 60 buckets of 2 s.
        assertThat(new CallRate(Duration.ofSeconds(100)).window()).isEqualTo(Duration.ofSeconds(120));
    }

    @Test
    void fourSlotsOfTwoMinuteCallsHaveTheirRateAtEveryMoment() {
        // A busy replica: four slots, each refilled as its call of two minutes ends, all four in step. Over one
        // minute, half the time no call left (no rate) and half the time four left at once after a quiet minute (a
        // burst). Over the window for a gateway timeout of 3 minutes the rate is the truth, 4 per 120 s, throughout.
        CallRate longCalls = new CallRate(CallRate.windowFor(Duration.ofMinutes(3)));
        long refills = 20;
        for (long refill = 0; refill < refills; refill++) {
            long at = T0 + refill * 120_000;
            if (refill > 0) {
                for (int slot = 0; slot < 4; slot++) {
                    longCalls.finished(120_000);
                }
            }
            for (int slot = 0; slot < 4; slot++) {
                longCalls.started(at + slot);
            }
        }
        double truth = 4 / 120.0;
        long end = T0 + (refills - 1) * 120_000;
        for (long later = 1000; later < 120_000; later += 7_000) {
            assertThat(longCalls.perSecond(end + later).orElseThrow())
                    .as("%d ms after the last refill", later)
                    .isCloseTo(truth, offset(truth * 0.2));
        }
    }
}
