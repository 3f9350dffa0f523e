package io.imageworker.testing.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.testing.gateway.SizeRules.Decision;
import io.imageworker.testing.gateway.SizeRules.Size;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** The size rules of the gateway contract §6, for every width and height. */
class GatewaySimulatorSizeRulesTest {

    @Property
    void silentlyChangesEverySizeIntoAValidOne(
            @ForAll @IntRange(min = 1, max = 20_000) int width, @ForAll @IntRange(min = 1, max = 20_000) int height) {
        Decision decision = SizeRules.decide(width + "x" + height, OversizeMode.SILENTLY_CHANGE);

        assertThat(decision.rejected()).isFalse();
        assertThat(SizeRules.valid(decision.output()))
                .as(decision.output().text())
                .isTrue();
    }

    @Property
    void rejectsExactlyTheSizesThatBreakALimit(
            @ForAll @IntRange(min = 1, max = 5_000) int width, @ForAll @IntRange(min = 1, max = 5_000) int height) {
        Size size = new Size(width, height);
        boolean valid = width % 16 == 0
                && height % 16 == 0
                && Math.max(width, height) <= 3 * Math.min(width, height)
                && Math.max(width, height) <= 3840
                && size.pixels() >= 655_360
                && size.pixels() <= 8_294_400;

        Decision decision = SizeRules.decide(size.text(), OversizeMode.REJECT);

        assertThat(decision.rejected()).isEqualTo(!valid);
        if (valid) {
            assertThat(decision.output()).isEqualTo(size);
            assertThat(decision.change()).isNull();
        }
    }

    @Property
    void keepsValidSizesUnchangedInEitherMode(
            @ForAll @IntRange(min = 1, max = 240) int w16, @ForAll @IntRange(min = 1, max = 240) int h16) {
        Size size = new Size(w16 * 16, h16 * 16);
        if (SizeRules.valid(size)) {
            assertThat(SizeRules.decide(size.text(), OversizeMode.SILENTLY_CHANGE)
                            .output())
                    .isEqualTo(size);
        }
    }

    @Property
    void turnsEveryRatioAliasInto2048Square(
            @ForAll @IntRange(min = 1, max = 99) int a, @ForAll @IntRange(min = 1, max = 99) int b) {
        Decision decision = SizeRules.decide(a + ":" + b, OversizeMode.REJECT);
        assertThat(decision.output()).isEqualTo(new Size(2048, 2048));
        assertThat(decision.change()).isEqualTo(SilentChange.RATIO_ALIAS_TO_2048);
    }
}
