package io.imageworker.image;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.image.SizeDecision.Accepted;
import io.imageworker.image.SizeDecision.Basis;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * The rules that must hold for every input, not only the examples of {@link SizePolicyTest}: whatever is accepted is
 * sent within the gateway's four hard limits. (Named {@code *Test} so that the build's one test suffix picks it up.)
 */
class SizePolicyPropertiesTest {

    private static final int TRIES = 1000;

    @Property(tries = TRIES)
    void everyPixelSizeIsSentWithinTheLimits(
            @ForAll @IntRange(min = 1, max = 100_000) int width, @ForAll @IntRange(min = 1, max = 100_000) int height) {
        Accepted accepted = accepted(SizePolicy.forGenerate(width + "x" + height));
        assertWithinLimits(accepted.sent());
    }

    @Property(tries = TRIES)
    void everyValidPixelSizeIsSentUnchanged(@ForAll("validSizes") ImageSize size) {
        assertThat(SizePolicy.forGenerate(size.toString()))
                .isEqualTo(new Accepted(size.toString(), size, Basis.AS_REQUESTED));
        // And normalization at the gateway's own cap leaves a valid size alone.
        assertThat(SizePolicy.normalize(size, SizeLimits.MAX_EDGE)).isEqualTo(size);
    }

    @Property(tries = TRIES)
    void everyRatioIsSentWithinTheLimitsAndTheNormalCap(
            @ForAll @IntRange(min = 1, max = 10_000) int w, @ForAll @IntRange(min = 1, max = 10_000) int h) {
        Accepted accepted = accepted(SizePolicy.forGenerate(w + ":" + h));
        ImageSize sent = accepted.sent();
        assertWithinLimits(sent);
        assertThat(sent.longestEdge()).isLessThanOrEqualTo(SizePolicy.NORMAL_CAP);
        // The sent shape stays close to the asked one (clamped to 3:1): rounding to 16 and one repair step on a short
        // side of at least 512 pixels move the ratio by a few percent at most.
        double wanted = Math.max(1.0 / 3, Math.min(3, (double) w / h));
        double got = (double) sent.width() / sent.height();
        assertThat(got / wanted).isBetween(0.94, 1.06);
    }

    @Property(tries = TRIES)
    void everySourceSizeGivesASizeWithinTheLimitsAndTheNormalCap(
            @ForAll @IntRange(min = 1, max = 100_000) int width,
            @ForAll @IntRange(min = 1, max = 100_000) int height,
            @ForAll @IntRange(min = 1, max = 8) int orientation) {
        ImageSize sent = SizePolicy.fromSource(width, height, orientation);
        assertWithinLimits(sent);
        assertThat(sent.longestEdge()).isLessThanOrEqualTo(SizePolicy.NORMAL_CAP);
        ImageInfo base = new ImageInfo(ImageFormat.PNG, Optional.of(new ImageSize(width, height)), orientation, "PNG");
        assertThat(SizePolicy.forEdit("auto", base)).isEqualTo(new Accepted("auto", sent, Basis.SOURCE_PROPORTIONS));
    }

    @Property(tries = TRIES)
    void orientationsFiveToEightGiveTheQuarterTurnOfOneToFour(
            @ForAll @IntRange(min = 1, max = 100_000) int width,
            @ForAll @IntRange(min = 1, max = 100_000) int height,
            @ForAll @IntRange(min = 1, max = 4) int upright) {
        assertThat(SizePolicy.fromSource(width, height, upright + 4))
                .isEqualTo(SizePolicy.fromSource(height, width, upright));
    }

    @Property(tries = TRIES)
    void normalizationIsSymmetricInWidthAndHeight(
            @ForAll @IntRange(min = 1, max = 100_000) int width, @ForAll @IntRange(min = 1, max = 100_000) int height) {
        // Portrait and landscape are treated alike: no side is favoured by the steps or the repair.
        ImageSize size = new ImageSize(width, height);
        assertThat(SizePolicy.normalize(size.swapped(), SizeLimits.MAX_EDGE))
                .isEqualTo(SizePolicy.normalize(size, SizeLimits.MAX_EDGE).swapped());
    }

    @Property(tries = TRIES)
    void anyStringIsAcceptedWithinTheLimitsOrRefusedNeverThrown(@ForAll("sizeLikeStrings") String size) {
        SizeDecision decision = SizePolicy.forGenerate(size);
        if (decision instanceof Accepted accepted) {
            assertWithinLimits(accepted.sent());
        } else {
            assertThat(((SizeDecision.Refused) decision).message()).startsWith("size ");
        }
    }

    @Provide
    Arbitrary<ImageSize> validSizes() {
        // Sides that are multiples of 16 up to the edge cap, kept when they also meet the ratio and pixel rules.
        Arbitrary<Integer> side =
                Arbitraries.integers().between(1, SizeLimits.MAX_EDGE / 16).map(n -> n * 16);
        return Combinators.combine(side, side).as(ImageSize::new).filter(SizeLimits::isValid);
    }

    @Provide
    Arbitrary<String> sizeLikeStrings() {
        // Mostly the characters of the grammar, so that many strings are accepted and many are near misses.
        Arbitrary<String> near = Arbitraries.strings()
                .withChars("0123456789xX: -+.")
                .ofMinLength(0)
                .ofMaxLength(16);
        return Arbitraries.oneOf(near, Arbitraries.strings().ofMaxLength(24));
    }

    private static Accepted accepted(SizeDecision decision) {
        assertThat(decision).isInstanceOf(Accepted.class);
        return (Accepted) decision;
    }

    private static void assertWithinLimits(ImageSize sent) {
        assertThat(SizeLimits.brokenRules(sent)).as("rules broken by %s", sent).isEmpty();
    }
}
