package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AnswerSizesTest {

    private static final long CAP = 64L * 1024 * 1024;

    private final AnswerSizes sizes = new AnswerSizes(CAP);

    @Test
    void beforeAnyAnswerAnUncompressedImageAndItsBase64AreReserved() {
        // 2048 x 2048 x 4 bytes, as base64 (4/3) and decoded (1): about 39 MB.
        assertThat(sizes.estimate("2048x2048")).isEqualTo((long) (2048L * 2048 * 4 * (1 + 4.0 / 3)));
    }

    @Test
    void afterAnswersTheLargestSeenPerPixelWithAMargin() {
        // A 9.4 MB PNG as a 12.6 MB answer: 22 MB held for 2048 x 2048.
        sizes.observe("2048x2048", 22_000_000);
        sizes.observe("1024x1024", 2_000_000);

        long reserved = sizes.estimate("2048x2048");

        assertThat(reserved).isEqualTo((long) (2048L * 2048 * (22_000_000.0 / (2048 * 2048)) * 1.1));
        assertThat(sizes.estimate("1024x1024")).isEqualTo(reserved / 4);
    }

    @Test
    void anAnswerLargerThanTheOthersRaisesTheNextEstimates() {
        sizes.observe("1024x1024", 2_000_000);
        long before = sizes.estimate("1024x1024");

        sizes.observe("1024x1024", 6_000_000);

        assertThat(sizes.estimate("1024x1024")).isGreaterThan(2 * before);
    }

    @Test
    void onlyTheRecentAnswersCount() {
        sizes.observe("1024x1024", 8_000_000);
        for (int i = 0; i < AnswerSizes.REMEMBERED; i++) {
            sizes.observe("1024x1024", 1_000_000);
        }

        assertThat(sizes.estimate("1024x1024")).isEqualTo((long) (1_000_000 * 1.1));
    }

    @Test
    void anEstimateIsNeverBelowTheFloorNorAboveWhatTheCapAllows() {
        sizes.observe("1024x1024", 10);
        assertThat(sizes.estimate("1024x1024")).isEqualTo(AnswerSizes.FLOOR);

        AnswerSizes fresh = new AnswerSizes(CAP);
        assertThat(fresh.estimate("3840x2160")).isLessThanOrEqualTo(CAP + CAP * 3 / 4);
        assertThat(new AnswerSizes(1_000_000).estimate("3840x2160")).isEqualTo(1_750_000);
    }

    @Test
    void aCallWaitingForItsAnswerReservesItsReadWindowAtMostNotItsAnswer() {
        // Before any answer, 2048x2048 is estimated at 39 MB: the call holds 64 KiB while it waits, not that.
        assertThat(sizes.beforeCall("2048x2048")).isEqualTo(AnswerSizes.WINDOW);
        // Answers of 6 KB (an 8 KB body and its 6 KB image) teach a smaller one.
        sizes.observe("1024x1024", 14_000);
        assertThat(sizes.beforeCall("1024x1024")).isBetween(15_390L, 15_410L);
        assertThat(sizes.beforeCall("1024x1024")).isLessThan(AnswerSizes.WINDOW);
    }

    @Test
    void anAnswerIsAdmittedForItsDeclaredBodyAndTheImageItDecodesTo() {
        assertThat(sizes.forAnswer("2048x2048", 12_000_000)).isEqualTo(21_000_000);
        assertThat(sizes.forAnswer("2048x2048", 0)).isZero();
        // Without a Content-Length: the estimate learned from the answers seen.
        sizes.observe("2048x2048", 22_000_000);
        assertThat(sizes.forAnswer("2048x2048", -1)).isEqualTo(sizes.estimate("2048x2048"));
    }

    @Test
    void aSizeThatIsNotPixelsCountsAsAMegapixel() {
        assertThat(AnswerSizes.pixels("auto")).isEqualTo(1024L * 1024);
        assertThat(AnswerSizes.pixels(null)).isEqualTo(1024L * 1024);
        assertThat(AnswerSizes.pixels("1536x1024")).isEqualTo(1536L * 1024);
    }
}
