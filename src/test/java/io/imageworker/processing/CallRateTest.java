package io.imageworker.processing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The rate of calls a queued request's estimate goes by: calls of the last minute, none invented. */
class CallRateTest {

    private static final long T0 = 1_800_000_000_000L;

    private final CallRate rate = new CallRate();

    @Test
    void noCallNoRate() {
        assertThat(rate.perSecond(T0)).isEmpty();
    }

    @Test
    void callsOfAFullWindowAreCountedOverIt() {
        for (int second = 0; second < 120; second++) {
            rate.started(T0 + second * 1000L);
            rate.started(T0 + second * 1000L + 500);
        }

        assertThat(rate.perSecond(T0 + 120_000).orElseThrow())
                .isCloseTo(2.0, org.assertj.core.data.Offset.offset(0.05));
    }

    @Test
    void callsThatBeganLatelyAreCountedOverTheTimeSinceTheFirst() {
        for (int i = 0; i < 10; i++) {
            rate.started(T0 + i * 250L);
        }

        // 10 calls in 2.5 s, not 10 in a minute.
        assertThat(rate.perSecond(T0 + 2500).orElseThrow()).isEqualTo(4.0);
    }

    @Test
    void aBurstIsCountedOverAtLeastASecond() {
        rate.started(T0);
        rate.started(T0);
        rate.started(T0 + 10);

        assertThat(rate.perSecond(T0 + 20).orElseThrow()).isEqualTo(3.0);
    }

    @Test
    void aMinuteWithoutCallsHasNoRateAndTheNextCallsStartAfresh() {
        rate.started(T0);

        assertThat(rate.perSecond(T0 + 61_000)).isEmpty();

        rate.started(T0 + 90_000);
        rate.started(T0 + 91_000);
        assertThat(rate.perSecond(T0 + 92_000).orElseThrow()).isEqualTo(1.0);
    }
}
